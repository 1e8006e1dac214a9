#include "cli/common.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "calibrate/profile_fit.h"
#include "util/text_file.h"
#include "util/utf8.h"

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

void add_headroom_flag(CLI::App& sub, double& value) {
  sub.add_option("--headroom", value, "share of each card's memory a plan must leave free, 0 to 0.9 (default: platform.toml's)")
      ->option_text("FRACTION");
}

Result<Headroom> resolve_headroom(double value, const Platform& platform) {
  if (std::isnan(value)) return default_headroom(platform.default_headroom_fraction(), platform.headroom_source());
  if (!(value >= 0 && value < 0.9)) return make_error("--headroom", "must be at least 0 and below 0.9");
  return Headroom{value, "--headroom"};
}

Result<const Catalog*> Context::catalog() { return load_once(catalog_, flags_.catalog_path, "--catalog"); }

Result<const PriceBook*> Context::prices() { return load_once(prices_, flags_.prices_path, "--prices"); }

Result<const EfficiencyTable*> Context::efficiency() {
  if (!efficiency_) {
    const std::string& path = flags_.calibration_path;
    if (path.empty()) {
      efficiency_ = EfficiencyTable::builtin();
    } else if (path.size() > 5 && path.substr(path.size() - 5) == ".json") {
      // A `gpuplan profile` summary: the run's own efficiency, applied to every GPU.
      auto text = read_text_file(path, "profile summary");
      if (!text) return make_error("--calibration", text.error().to_string());
      auto summary = nlohmann::json::parse(*text, nullptr, false);
      if (summary.is_discarded()) return make_error("--calibration", valid_utf8(path) + " is not valid JSON");
      auto catalog = this->catalog();
      if (!catalog) return catalog.error();
      // A measured run replaces the fit on published runs.
      auto fit = fit_profile(summary, {}, **catalog, EfficiencyTable::builtin().without_fit());
      if (!fit) return make_error("--calibration", fit.error().to_string());
      efficiency_ = calibrated_table(EfficiencyTable::builtin().without_fit(), **catalog, fit->scale);
    } else {
      auto c = EfficiencyTable::from_file(flags_.calibration_path);
      if (!c) return make_error("--calibration", c.error().to_string());
      efficiency_ = EfficiencyTable::builtin().with_overrides(*c);
    }
  }
  return &*efficiency_;
}

namespace {
// The JSON path ("predictions/0/step_time_s") of the first NaN or infinite number in `j`, or "".
std::string non_finite_at(const nlohmann::json& j, const std::string& at) {
  if (j.is_number_float()) return std::isfinite(j.get<double>()) ? "" : (at.empty() ? "(value)" : at);
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (auto p = non_finite_at(it.value(), at.empty() ? it.key() : at + "/" + it.key()); !p.empty()) return p;
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i)
      if (auto p = non_finite_at(j[i], at + "/" + std::to_string(i)); !p.empty()) return p;
  }
  return "";
}
}  // namespace

int print_json(const nlohmann::json& j, const std::string& input) {
  if (const std::string at = non_finite_at(j, ""); !at.empty())
    return fail(make_error(input, "gives a non-finite " + at + "; the input is outside what gpuplan can estimate"));
  fmt::print("{}\n", json_text(j, 2));
  return 0;
}

Status check_figures(std::initializer_list<Figure> figures, const std::string& input) {
  for (const Figure& f : figures) {
    if (!std::isfinite(f.value))
      return make_error(input, fmt::format("gives a non-finite {}; the input is outside what gpuplan can estimate", f.name));
    if (f.value < 0 || f.value > f.max)
      return make_error(input, fmt::format("gives an absurd {} ({:.3g}); the input is outside what gpuplan can estimate", f.name, f.value));
  }
  return std::nullopt;
}

int fail(const Error& e) {
  // One line, whatever the message holds (a path may contain newlines).
  std::string line = e.to_string();
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  fmt::print(stderr, "gpuplan: error: {}\n", line);
  return kExitUsage;
}

}  // namespace gpuplan::cli
