// Test support for the advisor tests: reading example and panel workloads, running the advisor on
// the built-in data, and checking that a sentence's numbers are fields of the JSON document.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "advise/advisor.h"

namespace gpuplan::testing_support {

std::string example_path(const std::string& name);
std::vector<std::string> panel_files();  // tests/panel/*.toml, sorted
AdviseRequest read_request(const std::string& path);
// With the platform's default headroom when `headroom` is negative.
Advice advise_request(const AdviseRequest& req, double headroom = -1);
// Advised once per file and process (the sanitizer build runs many tests in one process).
const Advice& advise_file(const std::string& path);

// "" when every fact of `s` is a field of the JSON (absolute paths from `root`, relative ones from
// `anchor`) that renders as the sentence does, and no number is left in the sentence once the facts
// are taken out; otherwise what is wrong.
std::string unchecked_numbers(const Sentence& s, const nlohmann::json& root, const nlohmann::json& anchor);

}  // namespace gpuplan::testing_support
