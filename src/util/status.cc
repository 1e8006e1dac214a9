#include "util/status.h"

namespace gpuplan {

std::string Error::to_string() const {
  if (field.empty()) return message;
  return field + ": " + message;
}

}  // namespace gpuplan
