#include "util/escape.h"

#include <cstring>

#include "util/utf8.h"

namespace gpuplan {

std::string html_escape(std::string_view s) {
  std::string o;
  for (char c : valid_utf8(s)) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string markdown_escape(std::string_view s) {
  std::string o;
  for (char c : printable(s)) {
    if (c == '\n' || c == '\t') {
      o += ' ';
    } else if (std::strchr("\\`*_[]<>|~&", c) != nullptr) {
      o += '\\';
      o += c;
    } else {
      o += c;
    }
  }
  return o;
}

std::string printable(std::string_view in) {
  const std::string s = valid_utf8(in);
  std::string o;
  o.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == 0x1b) {
      // ESC: skip a CSI (ESC [ params final), an OSC/DCS/APC/PM string (up to BEL or ESC \), or a
      // two-byte sequence.
      if (i + 1 >= s.size()) break;
      const char kind = s[i + 1];
      if (kind == '[') {
        i += 2;
        while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
      } else if (kind == ']' || kind == 'P' || kind == '_' || kind == '^' || kind == 'X') {
        i += 2;
        while (i < s.size() && s[i] != '\a' && !(s[i] == 0x1b && i + 1 < s.size() && s[i + 1] == '\\')) ++i;
        if (i < s.size() && s[i] == 0x1b) ++i;
      } else {
        ++i;
      }
      continue;
    }
    if (c == '\n' || c == '\t') {
      o += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      continue;
    } else if (c == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9f) {
      ++i;  // a C1 control (U+0080..U+009F), e.g. the 8-bit CSI
    } else {
      o += static_cast<char>(c);
    }
  }
  return o;
}

}  // namespace gpuplan
