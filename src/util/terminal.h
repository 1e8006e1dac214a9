// How text output should look where it is going: colour only on a terminal (NO_COLOR and --color
// override), and the width to fit (the terminal's, or 100 columns when output is not a terminal).
// Decided once at start-up by the CLI; tables and messages read it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "util/status.h"

namespace gpuplan {

struct TerminalStyle {
  bool color = false;
  size_t width = 100;
};

// `color_flag` is "auto", "always" or "never"; `fd` the stream the text goes to.
Result<TerminalStyle> detect_terminal_style(int fd, std::string_view color_flag);

const TerminalStyle& output_style();
void set_output_style(const TerminalStyle& style);

// `s` in bold or red when colour is on; unchanged otherwise.
std::string emphasis(std::string_view s);
std::string alarm(std::string_view s);

}  // namespace gpuplan
