#include "serving/trace.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace gpuplan {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

Status check_tokens(const std::string& where, const char* field, double v, int64_t& out) {
  if (!(v >= 1 && v <= static_cast<double>(kMaxTraceTokens)) || v != std::floor(v))
    return make_error(where, fmt::format("{} must be a whole number from 1 to {}", field, kMaxTraceTokens));
  out = static_cast<int64_t>(v);
  return std::nullopt;
}

Status check_arrival(const std::string& where, double v, double previous, double& out) {
  if (!std::isfinite(v) || v < 0 || v > 1e9) return make_error(where, "arrival_s must be a number of seconds from 0 to 1e9");
  if (v < previous) return make_error(where, "arrival_s must not decrease from one request to the next");
  out = v;
  return std::nullopt;
}

Result<double> number(std::string_view cell, const std::string& where, const std::string& column) {
  cell = trim(cell);
  double v = 0;
  const auto [ptr, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
  if (cell.empty() || ec != std::errc() || ptr != cell.data() + cell.size())
    return make_error(where, fmt::format("{} is not a number: '{}'", column, std::string(cell.substr(0, 40))));
  return v;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> cells;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    cells.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return cells;
}

Status add(Trace& t, const std::string& where, bool has_arrival, SimRequest r) {
  if (t.requests.size() >= kMaxTraceRequests) return make_error(where, fmt::format("more than {} requests", kMaxTraceRequests));
  if (t.requests.empty()) t.has_arrivals = has_arrival;
  else if (t.has_arrivals != has_arrival) return make_error(where, "arrival_s must be given on every line or on none");
  t.requests.push_back(r);
  return std::nullopt;
}

Result<Trace> parse_csv(const std::vector<std::string_view>& lines, const std::string& origin) {
  Trace t;
  size_t i = 0;
  while (i < lines.size() && trim(lines[i]).empty()) ++i;
  const std::vector<std::string_view> header = split(trim(lines[i]));
  int prompt = -1, output = -1, arrival = -1;
  for (size_t c = 0; c < header.size(); ++c) {
    const std::string_view h = trim(header[c]);
    int* slot = h == "prompt_tokens" ? &prompt : h == "output_tokens" ? &output : h == "arrival_s" ? &arrival : nullptr;
    if (!slot)
      return make_error(fmt::format("{}: line {}", origin, i + 1),
                        fmt::format("unknown column '{}' (expected prompt_tokens, output_tokens, arrival_s)", std::string(h.substr(0, 40))));
    if (*slot >= 0) return make_error(fmt::format("{}: line {}", origin, i + 1), fmt::format("column '{}' repeated", std::string(h)));
    *slot = static_cast<int>(c);
  }
  if (prompt < 0 || output < 0)
    return make_error(fmt::format("{}: line {}", origin, i + 1), "the header must name prompt_tokens and output_tokens");
  double previous = 0;
  for (++i; i < lines.size(); ++i) {
    const std::string_view line = trim(lines[i]);
    if (line.empty()) continue;
    const std::string where = fmt::format("{}: line {}", origin, i + 1);
    const auto cells = split(line);
    if (cells.size() != header.size())
      return make_error(where, fmt::format("has {} fields; the header has {}", cells.size(), header.size()));
    SimRequest r;
    auto p = number(cells[static_cast<size_t>(prompt)], where, "prompt_tokens");
    if (!p) return p.error();
    auto o = number(cells[static_cast<size_t>(output)], where, "output_tokens");
    if (!o) return o.error();
    if (auto s = check_tokens(where, "prompt_tokens", *p, r.prompt_tokens)) return *s;
    if (auto s = check_tokens(where, "output_tokens", *o, r.output_tokens)) return *s;
    if (arrival >= 0) {
      auto a = number(cells[static_cast<size_t>(arrival)], where, "arrival_s");
      if (!a) return a.error();
      if (auto s = check_arrival(where, *a, previous, r.arrival_s)) return *s;
      previous = r.arrival_s;
    }
    if (auto s = add(t, where, arrival >= 0, r)) return *s;
  }
  return t;
}

Result<Trace> parse_jsonl(const std::vector<std::string_view>& lines, const std::string& origin) {
  Trace t;
  double previous = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = trim(lines[i]);
    if (line.empty()) continue;
    const std::string where = fmt::format("{}: line {}", origin, i + 1);
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return make_error(where, "is not a JSON object");
    for (const auto& [k, v] : j.items())
      if (k != "prompt_tokens" && k != "output_tokens" && k != "arrival_s")
        return make_error(where, fmt::format("unknown key '{}' (expected prompt_tokens, output_tokens, arrival_s)", k.substr(0, 40)));
    SimRequest r;
    for (auto [key, out] : {std::pair{"prompt_tokens", &r.prompt_tokens}, std::pair{"output_tokens", &r.output_tokens}}) {
      if (!j.contains(key) || !j[key].is_number()) return make_error(where, fmt::format("{} is required and must be a number", key));
      if (auto s = check_tokens(where, key, j[key].get<double>(), *out)) return *s;
    }
    const bool has_arrival = j.contains("arrival_s");
    if (has_arrival) {
      if (!j["arrival_s"].is_number()) return make_error(where, "arrival_s must be a number");
      if (auto s = check_arrival(where, j["arrival_s"].get<double>(), previous, r.arrival_s)) return *s;
      previous = r.arrival_s;
    }
    if (auto s = add(t, where, has_arrival, r)) return *s;
  }
  return t;
}

}  // namespace

Result<Trace> parse_trace(std::string_view text, const std::string& origin) {
  const std::vector<std::string_view> lines = lines_of(text);
  size_t first = 0;
  while (first < lines.size() && trim(lines[first]).empty()) ++first;
  if (first == lines.size()) return make_error(origin, "is empty; expected CSV with a header or JSON Lines");
  auto t = trim(lines[first]).front() == '{' ? parse_jsonl(lines, origin) : parse_csv(lines, origin);
  if (!t) return t.error();
  if (t->requests.empty()) return make_error(origin, "holds no requests");
  return t;
}

}  // namespace gpuplan
