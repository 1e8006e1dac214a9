#include "advise/advisor_test_support.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "hardware/catalog.h"

namespace gpuplan::testing_support {

std::string example_path(const std::string& name) { return std::string(GPUPLAN_SOURCE_DIR) + "/examples/" + name; }

std::vector<std::string> panel_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GPUPLAN_SOURCE_DIR) + "/tests/panel"))
    if (e.path().extension() == ".toml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

AdviseRequest read_request(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  constexpr int64_t kToday = 20790;  // 2026-12-02: deadlines in the files are relative (deadline_days)
  auto r = parse_workload_file(ss.str(), path, kToday, PriceBook::builtin().ownership());
  if (!r) throw std::runtime_error(r.error().to_string());
  return *r;
}

Advice advise_request(const AdviseRequest& req, double headroom) {
  const Platform& p = Platform::builtin();
  AdviseOptions o;
  o.headroom = headroom < 0 ? default_headroom(p.default_headroom_fraction(), p.headroom_source()) : Headroom{headroom, "test"};
  return advise(req, Catalog::builtin(), PriceBook::builtin(), EfficiencyTable::builtin(), p, o);
}

const Advice& advise_file(const std::string& path) {
  static std::map<std::string, Advice> done;
  auto it = done.find(path);
  if (it == done.end()) it = done.emplace(path, advise_request(read_request(path))).first;
  return it->second;
}

std::string unchecked_numbers(const Sentence& s, const nlohmann::json& root, const nlohmann::json& anchor) {
  std::string skeleton = s.text;
  size_t at = 0;
  for (const Fact& f : s.facts) {
    const bool absolute = !f.path.empty() && f.path[0] == '/';
    const nlohmann::json& base = absolute ? root : anchor;
    const nlohmann::json::json_pointer ptr(absolute ? f.path : "/" + f.path);
    if (!base.contains(ptr)) return "no JSON field " + f.path;
    const nlohmann::json& v = base.at(ptr);
    Fact from_json = f;
    if (f.kind == Fact::Kind::text) {
      if (!v.is_string()) return f.path + " is not a string";
      from_json.text = v.get<std::string>();
    } else {
      if (!v.is_number()) return f.path + " is not a number";
      from_json.value = v.get<double>();
    }
    const std::string shown = render(f), held = render(from_json);
    if (shown != held) return fmt::format("{} shows {} but the JSON holds {}", f.path, shown, held);
    const size_t pos = skeleton.find(shown, at);
    if (pos == std::string::npos) return fmt::format("{} ({}) is not in the sentence", f.path, shown);
    skeleton.erase(pos, shown.size());
    at = pos;
  }
  // Digits left over are numbers no fact accounts for, unless they are part of a name ("fp16", "H100").
  for (size_t i = 0; i < skeleton.size(); ++i)
    if (std::isdigit(static_cast<unsigned char>(skeleton[i])) && (i == 0 || !std::isalnum(static_cast<unsigned char>(skeleton[i - 1]))))
      return "a number no fact accounts for: \"" + skeleton + "\"";
  return "";
}

}  // namespace gpuplan::testing_support
