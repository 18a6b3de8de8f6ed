// The listen addresses of the advisor's HTTP endpoints (`--metrics-addr`, `gpuwise webhook
// --listen`): one parser, so both accept and refuse the same spellings.
//
// Pure; any thread.
#pragma once

#include <string>

namespace gpuwise::advisor {

// Splits "HOST:PORT", "[IPV6]:PORT" or ":PORT" (all interfaces: host 0.0.0.0); false when
// malformed (no port, a port outside 0-65535, an IPv6 address without brackets).
bool splitListenAddress(const std::string& address, std::string* host, int* port);

} // namespace gpuwise::advisor
