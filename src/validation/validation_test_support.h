// Test support for the validation tests: the built-in tables run, fitted and scored leave one
// publication out, once per process (the sanitizer build runs every test in a few processes, and
// the serving rows simulate three times over).
#pragma once

#include "validation/cross_validation.h"

namespace gpuplan::testing_support {

const ValidatedTable& builtin_validated_table();

}  // namespace gpuplan::testing_support
