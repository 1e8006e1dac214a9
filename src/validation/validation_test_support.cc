#include "validation/validation_test_support.h"

#include <gtest/gtest.h>

namespace gpuplan::testing_support {

const ValidatedTable& builtin_validated_table() {
  static const ValidatedTable v = [] {
    auto r = run_builtin_cross_validation(Catalog::builtin(), EfficiencyTable::builtin());
    if (!r) {
      ADD_FAILURE() << r.error().to_string();
      return ValidatedTable{};
    }
    return *std::move(r);
  }();
  return v;
}

}  // namespace gpuplan::testing_support
