// Parsing TOML text into a table, and typed field access that reports the offending key.
// This is the one place that calls the TOML parser; toml++ throws, and nothing else catches it.
#pragma once

#include <toml++/toml.h>

#include <optional>
#include <string>
#include <string_view>

#include "util/status.h"

namespace gpuplan {

// `origin` names the text in error messages (a file path or "built-in gpus.toml").
Result<toml::table> parse_toml(std::string_view text, const std::string& origin);
Result<toml::table> parse_toml_file(const std::string& path);

// Typed readers over a table. `where` prefixes the key in errors ("gpu[3].memory_gb").
// Required readers fail on a missing key or a wrong type; optional ones only on a wrong type.
class TomlFields {
 public:
  TomlFields(const toml::table& table, std::string where) : t_(table), where_(std::move(where)) {}

  Result<std::string> string(std::string_view key) const;
  Result<double> number(std::string_view key) const;
  Result<long long> integer(std::string_view key) const;
  Result<bool> boolean(std::string_view key) const;
  Result<std::optional<std::string>> optional_string(std::string_view key) const;
  Result<std::optional<double>> optional_number(std::string_view key) const;
  Result<std::optional<long long>> optional_integer(std::string_view key) const;
  Result<std::optional<bool>> optional_boolean(std::string_view key) const;
  // An optional number that, when present, must lie in [lo, hi] (NaN never does).
  Result<std::optional<double>> optional_number_between(std::string_view key, double lo, double hi) const;

  // Fails naming the first key not in `allowed`, so typos in input files are caught.
  Status only_keys(std::initializer_list<std::string_view> allowed) const;

  std::string field(std::string_view key) const;
  const toml::table& table() const { return t_; }

 private:
  const toml::table& t_;
  std::string where_;
};

}  // namespace gpuplan
