#include "util/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace gpuplan {

namespace {
TerminalStyle g_style;  // written once by the CLI before any command runs
}

Result<TerminalStyle> detect_terminal_style(int fd, std::string_view color_flag) {
  TerminalStyle s;
  const bool tty = isatty(fd) == 1;
  if (color_flag == "always") s.color = true;
  else if (color_flag == "never") s.color = false;
  else if (color_flag == "auto") {
    const char* no_color = std::getenv("NO_COLOR");  // https://no-color.org: any non-empty value
    const char* term = std::getenv("TERM");
    s.color = tty && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
  } else {
    return make_error("--color", "must be auto, always or never, not '" + std::string(color_flag) + "'");
  }
  s.width = 100;
  if (tty) {
    winsize ws{};
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) s.width = ws.ws_col;
  }
  // COLUMNS, as shells export it, wins when set (also lets scripts ask for a width).
  if (const char* cols = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long c = std::strtol(cols, &end, 10);
    if (end != cols && *end == '\0' && c >= 40 && c <= 1000) s.width = static_cast<size_t>(c);
  }
  return s;
}

const TerminalStyle& output_style() { return g_style; }
void set_output_style(const TerminalStyle& style) { g_style = style; }

std::string emphasis(std::string_view s) {
  return g_style.color ? "\033[1m" + std::string(s) + "\033[0m" : std::string(s);
}
std::string alarm(std::string_view s) {
  return g_style.color ? "\033[1;31m" + std::string(s) + "\033[0m" : std::string(s);
}

}  // namespace gpuplan
