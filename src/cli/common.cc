#include "cli/common.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "calibrate/profile_fit.h"

namespace gpuplan::cli {

namespace {
// The built-in data, or the user's file named by `flag`, loaded on first use into `slot`.
template <class T>
Result<const T*> load_once(std::optional<T>& slot, const std::string& path, const char* flag) {
  if (!slot) {
    if (path.empty()) {
      slot = T::builtin();
    } else {
      auto r = T::from_file(path);
      if (!r) return make_error(flag, r.error().to_string());
      slot = std::move(r).value();
    }
  }
  return &*slot;
}
}  // namespace

Result<const Catalog*> Context::catalog() { return load_once(catalog_, flags_.catalog_path, "--catalog"); }

Result<const PriceBook*> Context::prices() { return load_once(prices_, flags_.prices_path, "--prices"); }

Result<const EfficiencyTable*> Context::efficiency() {
  if (!efficiency_) {
    const std::string& path = flags_.calibration_path;
    if (path.empty()) {
      efficiency_ = EfficiencyTable::builtin();
    } else if (path.size() > 5 && path.substr(path.size() - 5) == ".json") {
      // A `gpuplan profile` summary: the run's own efficiency, applied to every GPU.
      std::ifstream in(path);
      if (!in) return make_error("--calibration", "cannot open " + path);
      auto summary = nlohmann::json::parse(in, nullptr, false);
      if (summary.is_discarded()) return make_error("--calibration", path + " is not valid JSON");
      auto catalog = this->catalog();
      if (!catalog) return catalog.error();
      auto fit = fit_profile(summary, {}, **catalog, EfficiencyTable::builtin());
      if (!fit) return make_error("--calibration", fit.error().to_string());
      efficiency_ = calibrated_table(EfficiencyTable::builtin(), **catalog, fit->scale);
    } else {
      auto c = EfficiencyTable::from_file(flags_.calibration_path);
      if (!c) return make_error("--calibration", c.error().to_string());
      efficiency_ = EfficiencyTable::builtin().with_overrides(*c);
    }
  }
  return &*efficiency_;
}

int fail(const Error& e) {
  fmt::print(stderr, "gpuplan: error: {}\n", e.to_string());
  return kExitUsage;
}

}  // namespace gpuplan::cli
