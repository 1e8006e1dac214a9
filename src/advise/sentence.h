// Reasons whose numbers match the JSON: a sentence is rendered from facts, and each fact names the
// JSON field (a JSON pointer) that holds its value, so a test can check every number in every
// reason against the document `advise --json` prints.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

struct Fact {
  // How a value reads in a sentence: usd "$1,234"; count "16"; seconds "2.1 h"; percent (a fraction)
  // "45%"; bytes "14.60 GiB"; hours "730 h"; number "1.5"; text as is.
  enum class Kind { usd, count, seconds, percent, bytes, hours, number, text };
  std::string path;  // JSON pointer; absolute for recommendation reasons, relative to the entry for rejections
  Kind kind = Kind::text;
  double value = 0;
  std::string text;
};

// Builders: fact::usd("/recommendation/total_cost_usd", 1234.5).
namespace fact {
inline Fact usd(std::string path, double v) { return {std::move(path), Fact::Kind::usd, v, ""}; }
inline Fact count(std::string path, double v) { return {std::move(path), Fact::Kind::count, v, ""}; }
inline Fact seconds(std::string path, double v) { return {std::move(path), Fact::Kind::seconds, v, ""}; }
inline Fact percent(std::string path, double v) { return {std::move(path), Fact::Kind::percent, v, ""}; }
inline Fact bytes(std::string path, double v) { return {std::move(path), Fact::Kind::bytes, v, ""}; }
inline Fact hours(std::string path, double v) { return {std::move(path), Fact::Kind::hours, v, ""}; }
inline Fact number(std::string path, double v) { return {std::move(path), Fact::Kind::number, v, ""}; }
inline Fact text(std::string path, std::string t) { return {std::move(path), Fact::Kind::text, 0, std::move(t)}; }
}  // namespace fact

struct Sentence {
  std::string text;
  std::vector<Fact> facts;
};

// The fact as it reads in a sentence.
std::string render(const Fact& f);

// `tmpl` with each "{}" replaced by the next fact, rendered. REQUIRES: as many "{}" as facts.
Sentence sentence(std::string_view tmpl, std::vector<Fact> facts);

}  // namespace gpuplan
