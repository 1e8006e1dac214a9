// gpuplan: which GPUs to rent or buy for AI training and inference, with the work shown.
// main() only guards the dispatch: whatever escapes it (a bug, memory exhaustion) is reported as
// one line with exit code 1, never an abort with a core dump.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <new>
#include <string>

#include "cli/common.h"
#include "util/utf8.h"

int main(int argc, char** argv) {
  try {
    return gpuplan::cli::run_cli(argc, argv);
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "gpuplan: internal error: out of memory\n");
  } catch (const std::exception& e) {
    std::string what = gpuplan::valid_utf8(e.what());
    std::replace(what.begin(), what.end(), '\n', ' ');
    fmt::print(stderr, "gpuplan: internal error: {}\n", what);
  } catch (...) {
    fmt::print(stderr, "gpuplan: internal error: unknown exception\n");
  }
  return 1;
}
