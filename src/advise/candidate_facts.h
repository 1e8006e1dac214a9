// How the advisor records a number or a note in a candidate's own JSON entry, returning the Fact
// that points a sentence at that field (so every number in a reason is a field of the JSON).
#pragma once

#include <string>

#include "advise/advisor.h"

namespace gpuplan {

inline Fact num(Candidate& c, const std::string& key, Fact::Kind kind, double value) {
  c.facts[key] = value;
  return Fact{"facts/" + key, kind, value, ""};
}

inline Fact note(Candidate& c, const std::string& key, const std::string& value) {
  c.notes[key] = value;
  return fact::text("notes/" + key, value);
}

}  // namespace gpuplan
