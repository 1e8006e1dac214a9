// Text from users (paths, names, config strings) echoed into JSON or HTML must be valid UTF-8: a
// path may hold any bytes. Invalid sequences become U+FFFD rather than an exception or broken
// output. Every JSON document gpuplan writes goes through json_text(), which does the same for all
// strings in it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gpuplan {

// `s` with each invalid UTF-8 sequence (bad lead or continuation bytes, overlong forms, surrogates,
// code points past U+10FFFF, truncation) replaced by U+FFFD.
std::string valid_utf8(std::string_view s);
bool is_valid_utf8(std::string_view s);

// `j` serialised (indent < 0: one line), invalid UTF-8 in its strings replaced by U+FFFD.
std::string json_text(const nlohmann::json& j, int indent = -1);

}  // namespace gpuplan
