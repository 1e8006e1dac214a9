#include "data/toml_document.h"

#include "data/embedded.h"
#include "util/text_file.h"

#include <cstdlib>

#include <fmt/format.h>

namespace gpuplan {

namespace data {
void builtin_data_defect(const std::string& message) {
  fmt::print(stderr, "gpuplan: internal error in built-in data: {}\n", message);
  std::abort();
}
}  // namespace data

Result<toml::table> parse_toml(std::string_view text, const std::string& origin) {
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    return make_error(origin, fmt::format("malformed TOML at line {}, column {}: {}", where.line,
                                          where.column, e.description()));
  }
}

Result<toml::table> parse_toml_file(const std::string& path) {
  auto text = read_text_file(path, "file");
  if (!text) return text.error();
  return parse_toml(*text, path);
}

std::string TomlFields::field(std::string_view key) const {
  return where_.empty() ? std::string(key) : where_ + "." + std::string(key);
}

namespace {
const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}
}  // namespace

Result<std::optional<std::string>> TomlFields::optional_string(std::string_view key) const {
  const toml::node* n = t_.get(key);
  if (!n) return std::optional<std::string>{};
  if (auto s = n->value<std::string>(); s && n->is_string()) return std::optional<std::string>{*s};
  return make_error(field(key), fmt::format("must be a string, not {}", type_name(*n)));
}

Result<std::optional<double>> TomlFields::optional_number(std::string_view key) const {
  const toml::node* n = t_.get(key);
  if (!n) return std::optional<double>{};
  if (n->is_integer() || n->is_floating_point()) return std::optional<double>{*n->value<double>()};
  return make_error(field(key), fmt::format("must be a number, not {}", type_name(*n)));
}

Result<std::optional<double>> TomlFields::optional_number_between(std::string_view key, double lo, double hi) const {
  auto r = optional_number(key);
  if (!r || !*r) return r;
  if (!(**r >= lo && **r <= hi)) return make_error(field(key), fmt::format("must be between {} and {}, got {}", lo, hi, **r));
  return r;
}

Result<std::optional<long long>> TomlFields::optional_integer(std::string_view key) const {
  const toml::node* n = t_.get(key);
  if (!n) return std::optional<long long>{};
  if (n->is_integer()) return std::optional<long long>{*n->value<long long>()};
  return make_error(field(key), fmt::format("must be an integer, not {}", type_name(*n)));
}

Result<std::optional<bool>> TomlFields::optional_boolean(std::string_view key) const {
  const toml::node* n = t_.get(key);
  if (!n) return std::optional<bool>{};
  if (n->is_boolean()) return std::optional<bool>{*n->value<bool>()};
  return make_error(field(key), fmt::format("must be true or false, not {}", type_name(*n)));
}

template <class T>
static Result<T> required(Result<std::optional<T>> r, const std::string& field) {
  if (!r.ok()) return r.error();
  if (!r.value()) return make_error(field, "is required");
  return **r;
}

Result<std::string> TomlFields::string(std::string_view key) const {
  return required(optional_string(key), field(key));
}
Result<double> TomlFields::number(std::string_view key) const {
  return required(optional_number(key), field(key));
}
Result<long long> TomlFields::integer(std::string_view key) const {
  return required(optional_integer(key), field(key));
}
Result<bool> TomlFields::boolean(std::string_view key) const {
  return required(optional_boolean(key), field(key));
}

Status TomlFields::only_keys(std::initializer_list<std::string_view> allowed) const {
  for (const auto& [k, v] : t_) {
    bool known = false;
    for (auto a : allowed) known = known || k.str() == a;
    if (!known) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return make_error(field(k.str()), "unknown key (expected one of: " + list + ")");
    }
  }
  return std::nullopt;
}

}  // namespace gpuplan
