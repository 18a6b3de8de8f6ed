// A small XML well-formedness checker for the report tests: the SVG charts must parse as XML
// (usable outside HTML, and a sign the HTML is not broken either). Checks what a conforming
// parser rejects in our output: unbalanced or crossed tags, unquoted or duplicate attributes,
// '<' in attribute values, bare '&' or unknown entities, more than one root element, text
// outside the root. Returns "" when well-formed, else the first problem and its offset.
// Not a validating parser: no DTDs, no CDATA, no processing instructions (we write none).
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace gpuwise::advisor::test {

// The length of the entity reference starting at x[j] == '&', or 0 when it is not a valid one.
inline size_t xmlEntityLength(const std::string& x, size_t j, bool html) {
  size_t end = x.find(';', j);
  if (end == std::string::npos || end - j > 10) return 0;
  std::string name = x.substr(j + 1, end - j - 1);
  static const std::set<std::string> known = {"amp", "lt", "gt", "quot", "apos"};
  static const std::set<std::string> html_known = {"ldquo", "rdquo", "middot"};
  if (known.count(name) || (html && html_known.count(name))) return end - j + 1;
  if (name.size() > 1 && name[0] == '#') {
    bool hex = name[1] == 'x';
    for (size_t k = hex ? 2 : 1; k < name.size(); ++k)
      if (!(hex ? std::isxdigit(static_cast<unsigned char>(name[k]))
                : std::isdigit(static_cast<unsigned char>(name[k]))))
        return 0;
    return name.size() > (hex ? 2u : 1u) ? end - j + 1 : 0;
  }
  return 0;
}

// `html`: also accept the HTML entities the report uses (&ldquo; &rdquo; &middot;), for checking
// that the page's body is well-formed.
inline std::string xmlProblem(const std::string& x, bool html = false) {
  std::vector<std::string> open;
  int roots = 0;
  size_t i = 0, n = x.size();
  auto at = [&](const std::string& what) { return what + " at offset " + std::to_string(i); };
  auto isName = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
           c == '.';
  };
  auto entity = [&](size_t j) { return xmlEntityLength(x, j, html); };
  while (i < n) {
    char c = x[i];
    if (c == '&') {
      size_t len = entity(i);
      if (!len) return at("bare '&' or unknown entity");
      i += len;
      continue;
    }
    if (c != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c)))
        return at("text outside the root element");
      ++i;
      continue;
    }
    if (x.compare(i, 4, "<!--") == 0) {
      size_t end = x.find("-->", i + 4);
      if (end == std::string::npos) return at("unterminated comment");
      i = end + 3;
      continue;
    }
    if (x.compare(i, 2, "</") == 0) {
      size_t j = i + 2, start = j;
      while (j < n && isName(x[j]))
        ++j;
      std::string name = x.substr(start, j - start);
      while (j < n && std::isspace(static_cast<unsigned char>(x[j])))
        ++j;
      if (j >= n || x[j] != '>') return at("malformed end tag");
      if (open.empty() || open.back() != name) return at("end tag </" + name + "> does not match");
      open.pop_back();
      i = j + 1;
      continue;
    }
    size_t j = i + 1, start = j;
    while (j < n && isName(x[j]))
      ++j;
    std::string name = x.substr(start, j - start);
    if (name.empty()) return at("'<' not starting a tag");
    std::set<std::string> attributes;
    bool self_closing = false;
    for (;;) {
      while (j < n && std::isspace(static_cast<unsigned char>(x[j])))
        ++j;
      if (j >= n) return at("unterminated tag <" + name);
      if (x[j] == '>') break;
      if (x.compare(j, 2, "/>") == 0) {
        self_closing = true;
        ++j;
        break;
      }
      size_t a = j;
      while (j < n && isName(x[j]))
        ++j;
      std::string attr = x.substr(a, j - a);
      if (attr.empty()) return at("bad attribute in <" + name);
      if (!attributes.insert(attr).second) return at("duplicate attribute " + attr);
      if (j >= n || x[j] != '=') return at("attribute " + attr + " without a value");
      ++j;
      if (j >= n || (x[j] != '"' && x[j] != '\'')) return at("unquoted attribute " + attr);
      char q = x[j++];
      for (; j < n && x[j] != q; ++j) {
        if (x[j] == '<') return at("'<' in attribute " + attr);
        if (x[j] == '&') {
          size_t len = entity(j);
          if (!len) return at("bare '&' in attribute " + attr);
          j += len - 1;
        }
      }
      if (j >= n) return at("unterminated attribute " + attr);
      ++j;
    }
    if (open.empty() && ++roots > 1) return at("second root element <" + name);
    if (!self_closing) open.push_back(name);
    i = j + 1;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (roots == 0) return "no element";
  return "";
}

} // namespace gpuwise::advisor::test
