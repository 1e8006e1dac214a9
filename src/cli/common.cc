#include "cli/common.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

#include "calibrate/profile_fit.h"

namespace gpuplan::cli {

Result<const Catalog*> Context::catalog() {
  if (!catalog_) {
    if (flags_.catalog_path.empty()) {
      catalog_ = Catalog::builtin();
    } else {
      auto c = Catalog::from_file(flags_.catalog_path);
      if (!c) return make_error("--catalog", c.error().to_string());
      catalog_ = std::move(c).value();
    }
  }
  return &*catalog_;
}

Result<const PriceBook*> Context::prices() {
  if (!prices_) {
    if (flags_.prices_path.empty()) {
      prices_ = PriceBook::builtin();
    } else {
      auto p = PriceBook::from_file(flags_.prices_path);
      if (!p) return make_error("--prices", p.error().to_string());
      prices_ = std::move(p).value();
    }
  }
  return &*prices_;
}

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
