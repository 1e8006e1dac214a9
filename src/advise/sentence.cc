#include "advise/sentence.h"

#include <fmt/format.h>

#include <cmath>

#include "util/units.h"

namespace gpuplan {

namespace {
// "16", "11,960,320".
std::string grouped(double v) {
  const std::string digits = fmt::format("{:.0f}", std::fabs(v));
  std::string out = v <= -0.5 ? "-" : "";
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}
}  // namespace

std::string render(const Fact& f) {
  switch (f.kind) {
    case Fact::Kind::usd: return format_usd(f.value);
    case Fact::Kind::count: return grouped(f.value);
    case Fact::Kind::seconds: return format_seconds(f.value);
    case Fact::Kind::percent:
      return f.value != 0 && std::fabs(f.value) < 0.01 ? fmt::format("{:.1f}%", 100 * f.value) : fmt::format("{:.0f}%", 100 * f.value);
    case Fact::Kind::bytes: return format_bytes(f.value);
    case Fact::Kind::hours: return grouped(f.value) + " h";
    case Fact::Kind::number: return fmt::format("{:.3g}", f.value);
    case Fact::Kind::text: return f.text;
  }
  return f.text;
}

Sentence sentence(std::string_view tmpl, std::vector<Fact> facts) {
  Sentence s;
  size_t next = 0;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{' && i + 1 < tmpl.size() && tmpl[i + 1] == '}' && next < facts.size()) {
      s.text += render(facts[next++]);
      ++i;
    } else {
      s.text += tmpl[i];
    }
  }
  s.facts = std::move(facts);
  return s;
}

}  // namespace gpuplan
