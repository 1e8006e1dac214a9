#include "advise/workload_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "data/toml_document.h"
#include "model/resolve.h"
#include "util/suggest.h"

namespace gpuplan {

std::vector<std::string> all_modes() {
  return {"on-demand", "capacity-block", "reserved-1y", "reserved-3y", "spot", "buy"};
}

bool Constraints::allows(const std::string& mode) const { return std::find(modes.begin(), modes.end(), mode) != modes.end(); }

bool Constraints::allows_rental() const {
  return std::any_of(modes.begin(), modes.end(), [](const std::string& m) { return m != "buy"; });
}

bool Constraints::allows_class(const std::string& c) const {
  return provider_classes.empty() || std::find(provider_classes.begin(), provider_classes.end(), c) != provider_classes.end();
}

namespace {

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  // Howard Hinnant's algorithm: days since 1970-01-01 in the proleptic Gregorian calendar.
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// Workload::validate names the command-line flag (--lora-targets); a file's error names its key
// (training[0].lora_targets).
Error at_file_key(const std::string& where, const Error& e) {
  std::string key = e.field;
  if (key.rfind("--", 0) == 0) {
    key.erase(0, 2);
    std::replace(key.begin(), key.end(), '-', '_');
    // A --no-X switch is the file's X = false.
    if (key.rfind("no_", 0) == 0) key.erase(0, 3);
  }
  return make_error(where + "." + key, e.message);
}

Result<double> positive(const TomlFields& f, const char* key, double max) {
  auto v = f.number(key);
  if (!v) return v.error();
  if (!(*v > 0)) return make_error(f.field(key), fmt::format("must be positive, got {}", *v));
  if (*v > max) return make_error(f.field(key), fmt::format("{} is absurd", *v));
  return *v;
}

Result<ModelSpec> model_field(const TomlFields& f, const std::string& base_dir) {
  auto id = f.string("model");
  if (!id) return id.error();
  std::string arg = *id;
  // Paths are relative to the workload file.
  if (arg.find('/') != std::string::npos && !std::filesystem::path(arg).is_absolute() && !base_dir.empty())
    arg = (std::filesystem::path(base_dir) / arg).string();
  auto m = resolve_model(arg);
  if (!m) return make_error(f.field("model"), m.error().message);
  return m;
}

Result<Workload> precision_fields(const TomlFields& f, Workload w) {
  auto p = f.optional_string("precision");
  if (!p) return p.error();
  if (*p) {
    auto pr = parse_precision(**p);
    if (!pr) return make_error(f.field("precision"), "unknown precision '" + **p + "'" + did_you_mean(**p, precision_names()));
    w.precision = *pr;
  }
  auto kv = f.optional_string("kv_precision");
  if (!kv) return kv.error();
  if (*kv) {
    auto pr = parse_precision(**kv);
    if (!pr || !is_kv_precision(*pr)) return make_error(f.field("kv_precision"), "must be fp32, bf16, fp16, fp8, int8, q8_0 or q4_0");
    w.kv_precision = *pr;
  }
  auto flash = f.optional_boolean("flash_attention");
  if (!flash) return flash.error();
  w.flash_attention = flash->value_or(true);
  return w;
}

Result<TrainingJob> parse_job(const toml::table& t, const std::string& where, int64_t today, const std::string& dir) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"name", "model", "task", "precision", "optimizer", "seq", "lora_rank", "lora_targets", "flash_attention",
                            "tokens", "epochs", "dataset_tokens", "global_batch", "deadline", "deadline_days", "runs",
                            "kv_precision", "stack", "master_weights", "double_quant"}))
    return *s;
  TrainingJob j;
  auto name = f.string("name");
  if (!name) return name.error();
  j.name = *name;
  auto m = model_field(f, dir);
  if (!m) return m.error();
  j.model = *m;
  auto task = f.optional_string("task");
  if (!task) return task.error();
  auto tk = parse_task(task->value_or("full"));
  if (!tk || *tk == Task::infer) return make_error(f.field("task"), "must be pretrain, full, lora or qlora");
  j.workload.task = *tk;
  auto w = precision_fields(f, j.workload);
  if (!w) return w.error();
  j.workload = *w;
  auto stack = f.optional_string("stack");
  if (!stack) return stack.error();
  auto st = StackCatalog::builtin().find(stack->value_or(default_stack_id(j.workload.task)), f.field("stack"));
  if (!st) return st.error();
  j.stack = *st;
  apply_stack_training(*st, j.workload);
  auto master = f.optional_boolean("master_weights");  // false: the model is loaded in 16 bits
  if (!master) return master.error();
  if (*master) j.workload.fp32_master_weights = **master;
  auto dq = f.optional_boolean("double_quant");  // false: bitsandbytes' 4-bit default, 4.5 bits a weight
  if (!dq) return dq.error();
  if (*dq) j.workload.double_quant = **dq;
  auto opt = f.optional_string("optimizer");
  if (!opt) return opt.error();
  if (*opt) {
    auto o = parse_optimizer(**opt);
    if (!o) return make_error(f.field("optimizer"), "unknown optimizer '" + **opt + "'");
    j.workload.optimizer = *o;
  }
  auto seq = f.optional_integer("seq");
  if (!seq) return seq.error();
  j.workload.seq = seq->value_or(std::min<int64_t>(2048, j.model.max_position > 0 ? j.model.max_position : 2048));
  if (j.workload.seq <= 0 || j.workload.seq > (1 << 24)) return make_error(f.field("seq"), "must be between 1 and 16M");
  auto rank = f.optional_integer("lora_rank");
  if (!rank) return rank.error();
  j.workload.lora_rank = rank->value_or(16);
  if (j.workload.lora_rank <= 0) return make_error(f.field("lora_rank"), "must be positive");
  auto targets = f.optional_string("lora_targets");
  if (!targets) return targets.error();
  if (*targets) {
    auto tg = parse_lora_targets(**targets, f.field("lora_targets"));
    if (!tg) return tg.error();
    j.workload.lora_targets = *tg;
  }
  if (t.contains("tokens") == (t.contains("epochs") || t.contains("dataset_tokens")))
    return make_error(where, "give either tokens, or epochs and dataset_tokens");
  if (t.contains("tokens")) {
    auto v = positive(f, "tokens", 1e16);
    if (!v) return v.error();
    j.tokens = *v;
  } else {
    auto e = positive(f, "epochs", 1e4);
    auto d = positive(f, "dataset_tokens", 1e16);
    if (!e) return e.error();
    if (!d) return d.error();
    j.tokens = *e * *d;
  }
  auto gb = f.optional_integer("global_batch");
  if (!gb) return gb.error();
  if (*gb && **gb <= 0) return make_error(f.field("global_batch"), "must be positive");
  j.global_batch = gb->value_or(0);
  auto runs = f.optional_integer("runs");
  if (!runs) return runs.error();
  j.runs = runs->value_or(1);
  if (j.runs <= 0 || j.runs > 100000) return make_error(f.field("runs"), "must be between 1 and 100000");
  if (const toml::node* d = t.get("deadline")) {
    const auto* date = d->as_date();
    if (!date) return make_error(f.field("deadline"), "must be a date such as 2027-03-31");
    const int64_t day = days_from_civil(date->get().year, date->get().month, date->get().day);
    if (day <= today)
      return make_error(f.field("deadline"), fmt::format("{}-{:02}-{:02} is not in the future", date->get().year,
                                                         date->get().month, date->get().day));
    j.deadline_s = static_cast<double>(day - today) * 86400.0;
  }
  if (t.contains("deadline_days")) {
    if (j.deadline_s) return make_error(f.field("deadline_days"), "give deadline or deadline_days, not both");
    auto v = positive(f, "deadline_days", 36500);
    if (!v) return v.error();
    j.deadline_s = *v * 86400.0;
  }
  if (auto s = j.workload.validate(j.model)) return at_file_key(where, *s);
  return j;
}

Result<InferenceService> parse_service(const toml::table& t, const std::string& where, const std::string& dir) {
  TomlFields f(t, where);
  if (auto s = f.only_keys({"name", "model", "precision", "kv_precision", "flash_attention", "prompt_tokens",
                            "output_tokens", "peak_rps", "average_rps", "ttft_target_s", "tpot_target_s", "engine",
                            "lengths", "attention_dp"}))
    return *s;
  InferenceService s;
  auto engine = f.optional_string("engine");
  if (!engine) return engine.error();
  auto en = EngineCatalog::builtin().find(engine->value_or(kDefaultEngineId), f.field("engine"));
  if (!en) return en.error();
  s.engine = *en;
  auto name = f.string("name");
  if (!name) return name.error();
  s.name = *name;
  auto m = model_field(f, dir);
  if (!m) return m.error();
  if (m->traits.encoder) return make_error(f.field("model"), "is an encoder; services here generate text");
  s.model = *m;
  s.workload.task = Task::infer;
  auto w = precision_fields(f, s.workload);
  if (!w) return w.error();
  s.workload = *w;
  auto pt = f.integer("prompt_tokens");
  auto ot = f.integer("output_tokens");
  if (!pt) return pt.error();
  if (!ot) return ot.error();
  if (*pt <= 0 || *pt > (1 << 24)) return make_error(f.field("prompt_tokens"), "must be between 1 and 16M");
  if (*ot <= 0 || *ot > (1 << 24)) return make_error(f.field("output_tokens"), "must be between 1 and 16M");
  s.target.prompt_tokens = *pt;
  s.target.output_tokens = *ot;
  auto peak = positive(f, "peak_rps", 1e7);
  if (!peak) return peak.error();
  s.target.peak_rps = *peak;
  auto avg = f.optional_number("average_rps");
  if (!avg) return avg.error();
  s.target.average_rps = avg->value_or(*peak);
  if (!(s.target.average_rps > 0) || s.target.average_rps > s.target.peak_rps)
    return make_error(f.field("average_rps"), "must be positive and at most peak_rps");
  auto ttft = positive(f, "ttft_target_s", 3600);
  auto tpot = positive(f, "tpot_target_s", 60);
  if (!ttft) return ttft.error();
  if (!tpot) return tpot.error();
  s.target.ttft_s = *ttft;
  s.target.tpot_s = *tpot;
  auto lengths = f.optional_string("lengths");
  if (!lengths) return lengths.error();
  auto chat = parse_lengths(lengths->value_or("fixed"), s.target.prompt_tokens, s.target.output_tokens, f.field("lengths"),
                            "prompt_tokens", "output_tokens");
  if (!chat) return chat.error();
  s.target.chat_lengths = *chat;
  auto adp = f.optional_string("attention_dp");
  if (!adp) return adp.error();
  const auto choice = parse_attention_dp_choice(adp->value_or("auto"));
  if (!choice) return make_error(f.field("attention_dp"), "must be \"auto\", \"on\" or \"off\", not '" + adp->value_or("") + "'");
  s.attention_dp = *choice;
  if (std::string why = attention_dp_choice_refusal(s.attention_dp, s.model, s.engine); !why.empty())
    return make_error(f.field("attention_dp"), why);
  if (auto e = s.workload.validate(s.model)) return at_file_key(where, *e);
  return s;
}

Result<Constraints> parse_constraints(const toml::table* t, const std::string& where, const OwnershipCosts& defaults) {
  Constraints c;
  c.own = defaults;
  if (!t) return c;
  TomlFields f(*t, where);
  if (auto s = f.only_keys({"budget_capex_usd", "budget_monthly_usd", "tiers", "modes", "provider_classes", "gpus",
                            "max_gpus", "busy_hours_per_month", "electricity_usd_per_kwh", "pue", "lifetime_years"}))
    return *s;
  for (auto [key, out] : {std::pair{"budget_capex_usd", &c.budget_capex_usd}, std::pair{"budget_monthly_usd", &c.budget_monthly_usd}}) {
    if (!t->contains(key)) continue;
    auto v = positive(f, key, 1e13);
    if (!v) return v.error();
    *out = *v;
  }
  auto strings = [&](const char* key) -> Result<std::vector<std::string>> {
    std::vector<std::string> out;
    const toml::node* n = t->get(key);
    if (!n) return out;
    const toml::array* a = n->as_array();
    if (!a || a->empty()) return make_error(f.field(key), "must be a non-empty array of strings");
    for (const auto& e : *a) {
      if (!e.is_string()) return make_error(f.field(key), "must be an array of strings");
      out.push_back(*e.value<std::string>());
    }
    return out;
  };
  auto tiers = strings("tiers");
  if (!tiers) return tiers.error();
  if (!tiers->empty()) {
    c.tiers.clear();
    for (const auto& s : *tiers) {
      if (s == "datacenter") c.tiers.push_back(Tier::datacenter);
      else if (s == "workstation") c.tiers.push_back(Tier::workstation);
      else if (s == "consumer") c.tiers.push_back(Tier::consumer);
      else return make_error(f.field("tiers"), "unknown tier '" + s + "' (datacenter, workstation, consumer)");
    }
  }
  auto modes = strings("modes");
  if (!modes) return modes.error();
  if (!modes->empty()) {
    c.modes.clear();
    const std::vector<std::string> known = all_modes();
    for (const auto& s : *modes) {
      if (s == "cloud") {
        c.modes.insert(c.modes.end(), known.begin(), known.end() - 1);
      } else if (std::find(known.begin(), known.end(), s) != known.end()) {
        c.modes.push_back(s);
      } else {
        return make_error(f.field("modes"), "unknown mode '" + s + "' (cloud, on-demand, capacity-block, reserved-1y, reserved-3y, spot, buy)");
      }
    }
  }
  auto classes = strings("provider_classes");
  if (!classes) return classes.error();
  for (const auto& s : *classes)
    if (s != "hyperscaler" && s != "gpu-cloud" && s != "marketplace")
      return make_error(f.field("provider_classes"), "unknown provider class '" + s + "' (hyperscaler, gpu-cloud, marketplace)");
  c.provider_classes = *classes;
  auto gpus = strings("gpus");
  if (!gpus) return gpus.error();
  c.gpus = *gpus;
  auto mg = f.optional_integer("max_gpus");
  if (!mg) return mg.error();
  c.max_gpus = mg->value_or(64);
  if (c.max_gpus <= 0 || c.max_gpus > 65536) return make_error(f.field("max_gpus"), "must be between 1 and 65536");
  // A month has at most 744 hours.
  auto bh = f.optional_number_between("busy_hours_per_month", 0, 744);
  if (!bh) return bh.error();
  c.busy_hours_per_month = bh->value_or(0);
  struct K {
    const char* key;
    double* out;
    double lo, hi;
  };
  for (const K& k : {K{"electricity_usd_per_kwh", &c.own.electricity_usd_per_kwh, 0, 10}, K{"pue", &c.own.pue, 1, 5},
                     K{"lifetime_years", &c.own.lifetime_years, 0.1, 30}}) {
    auto v = f.optional_number(k.key);
    if (!v) return v.error();
    if (!*v) continue;
    if (**v <= k.lo || **v > k.hi) return make_error(f.field(k.key), fmt::format("must be above {} and at most {}", k.lo, k.hi));
    *k.out = **v;
  }
  return c;
}

}  // namespace

Result<AdviseRequest> parse_workload_file(std::string_view text, const std::string& origin, int64_t today,
                                          const OwnershipCosts& defaults) {
  auto doc = parse_toml(text, origin);
  if (!doc) return doc.error();
  TomlFields top(*doc, origin);
  if (auto s = top.only_keys({"name", "training", "inference", "constraints"})) return *s;
  AdviseRequest r;
  auto name = top.optional_string("name");
  if (!name) return name.error();
  r.name = name->value_or(origin);
  const std::string dir = std::filesystem::path(origin).parent_path().string();
  for (const char* section : {"training", "inference"}) {
    const toml::node* n = doc->get(section);
    if (!n) continue;
    const toml::array* a = n->as_array();
    if (!a) return make_error(origin + ": " + section, std::string("must be an array of tables ([[") + section + "]])");
    for (size_t i = 0; i < a->size(); ++i) {
      const std::string where = fmt::format("{}: {}[{}]", origin, section, i);
      const toml::table* t = a->get(i)->as_table();
      if (!t) return make_error(where, "must be a table");
      if (std::string_view(section) == "training") {
        auto j = parse_job(*t, where, today, dir);
        if (!j) return j.error();
        r.training.push_back(*j);
      } else {
        auto s = parse_service(*t, where, dir);
        if (!s) return s.error();
        r.inference.push_back(*s);
      }
    }
  }
  if (r.training.empty() && r.inference.empty()) return make_error(origin, "has no [[training]] or [[inference]] entries");
  const toml::node* cn = doc->get("constraints");
  if (cn && !cn->is_table()) return make_error(origin + ": constraints", "must be a table");
  auto c = parse_constraints(cn ? cn->as_table() : nullptr, origin + ": constraints", defaults);
  if (!c) return c.error();
  r.constraints = *c;
  return r;
}

}  // namespace gpuplan
