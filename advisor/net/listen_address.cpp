#include "advisor/net/listen_address.h"

#include <charconv>

namespace gpuwise::advisor {

bool splitListenAddress(const std::string& address, std::string* host, int* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  std::string h = address.substr(0, colon), p = address.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']')
    h = h.substr(1, h.size() - 2);
  else if (h.find(':') != std::string::npos)
    return false; // IPv6 needs brackets
  int value = -1;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size() || value < 0 || value > 65535)
    return false;
  *host = h.empty() ? "0.0.0.0" : h;
  *port = value;
  return true;
}

} // namespace gpuwise::advisor
