#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include "report/svg_labels.h"
#include "util/escape.h"
#include "util/units.h"

namespace gpuplan {

namespace {

std::string esc(const std::string& s) { return html_escape(s); }

const char* kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"};

std::string memory_chart(const ReportFigures& f) {
  if (!f.memory) return "";
  const MemoryEstimate& e = *f.memory;
  const std::pair<const char*, double> parts[] = {{"weights", e.weights},       {"gradients", e.gradients},
                                                  {"optimizer", e.optimizer},   {"activations", e.activations},
                                                  {"KV cache", e.kv_cache},     {"overhead", e.overhead()}};
  const double total = std::max(e.nvidia_smi(), f.capacity_bytes);
  const double W = 760, x0 = 20;
  std::string svg = fmt::format("<svg viewBox='0 0 800 165' width='800' height='165' role='img' aria-label='memory breakdown'>");
  double x = x0;
  int i = 0;
  for (const auto& [name, bytes] : parts) {
    const double w = W * bytes / total;
    if (w > 0.5)
      svg += fmt::format("<rect x='{:.1f}' y='30' width='{:.1f}' height='40' fill='{}'><title>{}: {}</title></rect>", x, w,
                         kColors[i], name, format_bytes(bytes));
    const double lx = x0 + 250 * (i % 3), ly = 95 + 18 * (i / 3);
    svg += fmt::format("<rect x='{}' y='{}' width='12' height='12' fill='{}'/><text x='{}' y='{}' font-size='12'>{} {}</text>",
                       lx, ly, kColors[i], lx + 16, ly + 11, name, format_bytes(bytes));
    x += w;
    ++i;
  }
  if (f.capacity_bytes > 0) {
    const double cx = x0 + W * f.capacity_bytes / total;
    svg += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='20' y2='80' stroke='black' stroke-dasharray='4 3'/>"
                       "<text x='{0:.1f}' y='15' font-size='12' text-anchor='end'>card: {1}</text>", cx, format_bytes(f.capacity_bytes));
  }
  svg += fmt::format("<text x='{}' y='155' font-size='12'>total as nvidia-smi shows: {}</text></svg>", x0, format_bytes(e.nvidia_smi()));
  return "<h2>Memory per GPU: " + esc(f.memory_title) + "</h2>" + svg;
}

// Rentals billed by the hour cost in proportion to the time; reservations and purchases do not.
bool cost_follows_time(const Candidate& c) {
  return c.mode == "on-demand" || c.mode == "spot" || c.mode == "capacity-block";
}

std::optional<double> tightest_deadline_s(const AdviseRequest& req) {
  std::optional<double> d;
  for (const auto& j : req.training)
    if (j.deadline_s && (!d || *j.deadline_s < *d)) d = j.deadline_s;
  return d;
}

std::string cost_chart(const AdviseRequest& req, const Advice& a, const ReportFigures& f) {
  if (a.candidates.empty()) return "";
  const double band_lo = f.time_band ? f.time_band->low : 1, band_hi = f.time_band ? f.time_band->high : 1;
  double max_cost = 0, min_cost = 1e300, max_t = 0;
  for (const auto& c : a.candidates) {
    const double hi = cost_follows_time(c) ? band_hi : 1, lo = cost_follows_time(c) ? band_lo : 1;
    max_cost = std::max(max_cost, c.total_cost_usd * hi);
    min_cost = std::min(min_cost, std::max(1.0, c.total_cost_usd * lo));
    max_t = std::max(max_t, c.training_time_s * band_hi);
  }
  const bool has_time = max_t > 0;
  const std::optional<double> deadline = has_time ? tightest_deadline_s(req) : std::nullopt;
  if (deadline) max_t = std::max(max_t, *deadline * 1.05);
  // Budget lines: capex against what buying costs up front, the monthly budget over the horizon.
  std::vector<std::pair<double, std::string>> budgets;
  if (req.constraints.budget_capex_usd)
    budgets.emplace_back(*req.constraints.budget_capex_usd, "capex budget " + format_usd_short(*req.constraints.budget_capex_usd));
  if (req.constraints.budget_monthly_usd)
    budgets.emplace_back(*req.constraints.budget_monthly_usd * 12 * a.horizon_years,
                         fmt::format("monthly budget {} over {:.0f} years", format_usd_short(*req.constraints.budget_monthly_usd),
                                     a.horizon_years));
  for (const auto& [usd, label] : budgets) {
    max_cost = std::max(max_cost, usd * 1.05);
    min_cost = std::min(min_cost, std::max(1.0, usd));
  }
  // Costs often span orders of magnitude (renting for hours against buying servers): log axis then.
  const bool log_y = max_cost / min_cost > 20;
  const double ly0 = std::floor(std::log10(min_cost)), ly1 = std::ceil(std::log10(max_cost));
  const double X0 = 80, Y0 = 330, W = 670, H = 280, TOP = Y0 - H;
  auto ynorm = [&](double usd) { return log_y ? (std::log10(std::max(1.0, usd)) - ly0) / (ly1 - ly0) : usd / max_cost; };
  auto py = [&](double usd) { return Y0 - H * std::clamp(ynorm(usd), 0.0, 1.0); };
  const double days_max = max_t / 86400;
  const std::vector<double> xticks = has_time ? nice_ticks(0, days_max, 5) : std::vector<double>{};
  const double x_span = has_time ? std::max(days_max, xticks.empty() ? days_max : xticks.back()) : 1;
  auto px_days = [&](double days) { return X0 + W * days / x_span; };
  auto px = [&](size_t i, const Candidate& c) {
    return has_time ? px_days(c.training_time_s / 86400) : X0 + W * (i + 0.5) / a.candidates.size();
  };

  LabelPlacer labels;
  const Box plot{X0 + 2, TOP - 20, X0 + W, Y0 - 2};
  std::string svg = fmt::format("<svg viewBox='0 0 800 385' width='800' height='385' role='img' aria-label='{}'>",
                                has_time ? "cost against training time" : "cost by candidate");
  svg += fmt::format("<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='black'/><line x1='{0}' y1='{1}' x2='{0}' y2='{3}' stroke='black'/>",
                     X0, Y0, X0 + W, TOP);
  svg += fmt::format("<text class='axis-title' x='{}' y='375' font-size='12' text-anchor='middle'>{}</text>", X0 + W / 2,
                     has_time ? "time for all jobs, one run each (days)" : "candidates, cheapest first (rank)");
  svg += fmt::format("<text class='axis-title' x='16' y='{0}' font-size='12' transform='rotate(-90 16 {0})' text-anchor='middle'>"
                     "total cost over {1:.0f} years (USD{2})</text>",
                     Y0 - H / 2, a.horizon_years, log_y ? ", log scale" : "");
  // Y ticks: each power of ten on a log axis (1-2-5 steps when it spans few decades), else 1-2-5 steps.
  std::vector<double> yticks;
  if (log_y) {
    const bool dense = ly1 - ly0 <= 2;
    for (double e = ly0; e <= ly1; ++e)
      for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10, e);
        if (std::log10(v) <= ly1 + 1e-9) yticks.push_back(v);
      }
  } else {
    yticks = nice_ticks(0, max_cost, 5);
  }
  for (double v : yticks) {
    const double y = py(v);
    svg += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#eee'/>"
                       "<text class='tick' x='{3}' y='{4:.1f}' font-size='10' text-anchor='end'>{5}</text>",
                       X0, X0 + W, y, X0 - 5, y + 3, format_usd_short(v));
  }
  if (has_time)
    for (double d : xticks)
      svg += fmt::format("<text class='tick' x='{:.1f}' y='{}' font-size='10' text-anchor='middle'>{}</text>", px_days(d), Y0 + 15,
                         fmt::format("{:g}", d));
  else
    for (size_t i = 0; i < a.candidates.size(); i += std::max<size_t>(1, a.candidates.size() / 8))
      svg += fmt::format("<text class='tick' x='{:.1f}' y='{}' font-size='10' text-anchor='middle'>{}</text>", px(i, a.candidates[i]),
                         Y0 + 15, i + 1);
  // The legend sits above the plot, where no point goes.
  svg += "<text class='legend' x='420' y='22' font-size='11' fill='#4e79a7'>● rent</text>"
         "<text class='legend' x='475' y='22' font-size='11' fill='#e15759'>● buy</text>"
         "<text class='legend' x='525' y='22' font-size='11' fill='#59a14f'>— Pareto front</text>";
  if (f.time_band) svg += "<text class='legend' x='630' y='22' font-size='11' fill='#555'>├┤ 80% band</text>";
  if (deadline) {
    const double x = px_days(*deadline / 86400);
    const std::string text = "deadline " + format_seconds(*deadline);
    svg += fmt::format("<line class='deadline' x1='{0:.1f}' x2='{0:.1f}' y1='{1}' y2='{2}' stroke='#b00' stroke-dasharray='6 3'/>", x, Y0, TOP);
    if (auto at = labels.place(x, TOP + 8, text, 11, plot))
      svg += fmt::format("<text class='label' x='{:.1f}' y='{:.1f}' font-size='11' fill='#b00'>{}</text>", at->first, at->second, esc(text));
  }
  for (const auto& [usd, text] : budgets) {
    const double y = py(usd);
    svg += fmt::format("<line class='budget' x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#7a4' stroke-dasharray='6 3'/>", X0, X0 + W, y);
    if (auto at = labels.place(X0 + W, y, text, 11, plot))
      svg += fmt::format("<text class='label' x='{:.1f}' y='{:.1f}' font-size='11' fill='#7a4'>{}</text>", at->first, at->second, esc(text));
  }
  std::vector<std::pair<double, double>> front;
  std::vector<std::tuple<double, double, std::string>> wanted;  // labels, in order of importance
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    const Candidate& c = a.candidates[i];
    const double x = px(i, c), y = py(c.total_cost_usd);
    labels.reserve({x - 7, y - 7, x + 7, y + 7});
    if (c.pareto) front.emplace_back(x, y);
    const std::string colour = c.mode == "buy" ? "#e15759" : "#4e79a7";
    if (f.time_band && has_time && c.training_time_s > 0) {
      const double xl = px_days(c.training_time_s * band_lo / 86400), xh = px_days(c.training_time_s * band_hi / 86400);
      svg += fmt::format("<line class='band' x1='{:.1f}' x2='{:.1f}' y1='{:.1f}' y2='{:.1f}' stroke='{}' stroke-opacity='0.5'/>", xl, xh, y, y, colour);
      if (cost_follows_time(c))
        svg += fmt::format("<line class='band' x1='{0:.1f}' x2='{0:.1f}' y1='{1:.1f}' y2='{2:.1f}' stroke='{3}' stroke-opacity='0.5'/>", x,
                           py(c.total_cost_usd * band_lo), py(c.total_cost_usd * band_hi), colour);
    }
    svg += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='{}' fill='{}'><title>{} x {} {}: {}{}</title></circle>", x, y,
                       i == 0 ? 7 : 5, colour, c.gpus, esc(c.gpu), esc(c.mode), format_usd(c.total_cost_usd),
                       has_time ? ", " + format_seconds(c.training_time_s) : "");
    if (i == 0 || c.pareto) wanted.emplace_back(x, y, fmt::format("{} x {} {}", c.gpus, c.gpu, c.mode));
  }
  for (const auto& [x, y, text] : wanted)
    if (auto at = labels.place(x, y, text, 10, plot))
      svg += fmt::format("<text class='label' x='{:.1f}' y='{:.1f}' font-size='10'>{}</text>", at->first, at->second, esc(text));
  std::sort(front.begin(), front.end());
  if (front.size() > 1) {
    std::string pts;
    for (auto [x, y] : front) pts += fmt::format("{:.1f},{:.1f} ", x, y);
    svg += "<polyline fill='none' stroke='#59a14f' stroke-width='2' points='" + pts + "'/>";
  }
  svg += "</svg>";
  return std::string("<h2>") + (has_time ? "Cost against time" : "Cost by candidate") + "</h2>" + svg;
}

// "100 TFLOP/s" with a whole number, for axis ticks at powers of ten.
std::string flops_tick(double v) {
  static constexpr std::pair<double, const char*> kScales[] = {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}};
  for (auto [scale, prefix] : kScales)
    if (v >= scale * 0.999) return fmt::format("{:.0f} {}FLOP/s", v / scale, prefix);
  return fmt::format("{:.0f} FLOP/s", v);
}

std::string roofline_chart(const ReportFigures& f) {
  if (!f.roofline) return "";
  const RooflineReport& r = *f.roofline;
  // Log-log axes: intensity 0.1 .. 10^4 FLOP/byte, throughput over the six decades below the peak.
  const double X0 = 95, Y0 = 330, W = 655, H = 280;
  const double lx0 = -1, lx1 = 4, ly1 = std::ceil(std::log10(r.peak_flops * 1.5)), ly0 = ly1 - 6;
  auto px = [&](double i) { return X0 + W * (std::log10(std::max(i, 1e-1)) - lx0) / (lx1 - lx0); };
  auto py = [&](double f) { return Y0 - H * (std::log10(std::max(f, std::pow(10, ly0))) - ly0) / (ly1 - ly0); };
  std::string svg = "<svg viewBox='0 0 800 385' width='800' height='385' role='img' aria-label='roofline'>";
  svg += fmt::format("<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='black'/><line x1='{0}' y1='{1}' x2='{0}' y2='{3}' stroke='black'/>",
                     X0, Y0, X0 + W, Y0 - H);
  for (int e = -1; e <= 4; ++e)
    svg += fmt::format("<text class='tick' x='{:.0f}' y='{}' font-size='10' text-anchor='middle'>{:g}</text>", px(std::pow(10, e)), Y0 + 15,
                       std::pow(10, e));
  for (double e = ly0; e <= ly1; ++e) {
    const double y = py(std::pow(10, e));
    svg += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#eee'/>"
                       "<text class='tick' x='{3}' y='{4:.1f}' font-size='10' text-anchor='end'>{5}</text>",
                       X0, X0 + W, y, X0 - 5, y + 3, flops_tick(std::pow(10, e)));
  }
  svg += fmt::format("<text class='axis-title' x='{}' y='375' font-size='12' text-anchor='middle'>arithmetic intensity (FLOP/byte, log scale)</text>",
                     X0 + W / 2);
  svg += fmt::format("<text class='axis-title' x='16' y='{0}' font-size='12' transform='rotate(-90 16 {0})' text-anchor='middle'>"
                     "attainable FLOP/s (log scale)</text>", Y0 - H / 2);
  // Roof: bandwidth slope up to the ridge point, then the compute ceiling.
  const double i0 = 0.1, ir = r.ridge_point, i1 = 1e4;
  svg += fmt::format("<polyline fill='none' stroke='black' stroke-width='2' points='{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}'/>",
                     px(i0), py(i0 * r.bandwidth_Bps), px(ir), py(r.peak_flops), px(i1), py(r.peak_flops));
  LabelPlacer labels;
  const Box plot{X0 + 2, Y0 - H - 15, X0 + W, Y0 - 2};
  const std::string ridge = fmt::format("ridge {:.0f} FLOP/B, peak {}", r.ridge_point, format_flops(r.peak_flops));
  if (auto at = labels.place(px(ir), py(r.peak_flops), ridge, 11, plot))
    svg += fmt::format("<text class='label' x='{:.1f}' y='{:.1f}' font-size='11'>{}</text>", at->first, at->second, ridge);
  for (const auto& op : r.ops) {
    if (op.intensity <= 0) continue;
    const double attained = std::min(r.peak_flops, op.intensity * r.bandwidth_Bps);
    svg += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='4' fill='{}'><title>{}: {:.1f} FLOP/B, {}-bound</title></circle>",
                       px(op.intensity), py(attained), op.memory_bound ? "#e15759" : "#4e79a7", esc(op.name), op.intensity,
                       op.memory_bound ? "memory" : "compute");
  }
  svg += "<text class='legend' x='560' y='22' font-size='11' fill='#4e79a7'>● compute-bound</text>"
         "<text class='legend' x='670' y='22' font-size='11' fill='#e15759'>● memory-bound</text></svg>";
  return "<h2>Roofline: " + esc(f.roofline_title) + "</h2>" + svg;
}

std::string time_with_band(double t, const ReportFigures& f) {
  if (t <= 0) return "";
  if (!f.time_band) return format_seconds(t);
  return fmt::format("{} ({}–{})", format_seconds(t), format_seconds(t * f.time_band->low), format_seconds(t * f.time_band->high));
}

std::string cost_with_band(const Candidate& c, const ReportFigures& f) {
  if (!f.time_band || !cost_follows_time(c) || c.training_time_s <= 0) return format_usd(c.total_cost_usd);
  return fmt::format("{} ({}–{})", format_usd(c.total_cost_usd), format_usd_short(c.total_cost_usd * f.time_band->low),
                     format_usd_short(c.total_cost_usd * f.time_band->high));
}

// What the advice was asked: every job, service and constraint, as the workload file said it.
std::string inputs_section(const AdviseRequest& req, const Advice& a) {
  std::string h = "<h2>Inputs</h2>";
  if (!req.training.empty()) {
    h += "<table class='inputs'><tr><th>training job</th><th>model</th><th>task</th><th>precision</th><th>stack</th>"
         "<th>tokens per run</th><th>runs</th><th>deadline</th></tr>";
    for (const auto& j : req.training)
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td></tr>",
                       esc(j.name), esc(j.model.name), to_string(j.workload.task), to_string(j.workload.precision), esc(j.stack.id),
                       format_count(j.tokens), j.runs, j.deadline_s ? format_seconds(*j.deadline_s) : "none");
    h += "</table>";
  }
  if (!req.inference.empty()) {
    h += "<table class='inputs'><tr><th>service</th><th>model</th><th>weights</th><th>prompt / output tokens</th>"
         "<th>peak / average req/s</th><th>TTFT / TPOT targets</th></tr>";
    for (const auto& s : req.inference)
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=n>{} / {}</td><td class=n>{:g} / {:g}</td><td>{} / {}</td></tr>",
                       esc(s.name), esc(s.model.name), to_string(s.workload.precision), s.target.prompt_tokens, s.target.output_tokens,
                       s.target.peak_rps, s.target.average_rps, format_seconds(s.target.ttft_s), format_seconds(s.target.tpot_s));
    h += "</table>";
  }
  const Constraints& c = req.constraints;
  std::string tiers, modes;
  for (auto t : c.tiers) tiers += (tiers.empty() ? "" : ", ") + to_string(t);
  for (const auto& m : c.modes) modes += (modes.empty() ? "" : ", ") + m;
  h += "<table class='inputs'><tr><th>constraint</th><th>value</th></tr>";
  h += fmt::format("<tr><td>capex budget</td><td>{}</td></tr>", c.budget_capex_usd ? format_usd(*c.budget_capex_usd) : "none");
  h += fmt::format("<tr><td>monthly budget</td><td>{}</td></tr>", c.budget_monthly_usd ? format_usd(*c.budget_monthly_usd) : "none");
  h += fmt::format("<tr><td>tiers</td><td>{}</td></tr><tr><td>ways to get GPUs</td><td>{}</td></tr>", tiers, esc(modes));
  h += fmt::format("<tr><td>most GPUs</td><td>{}</td></tr><tr><td>horizon</td><td>{:.0f} years</td></tr>", c.max_gpus, a.horizon_years);
  h += fmt::format("<tr><td>memory headroom kept free</td><td>{:.0f}%{}</td></tr>", a.headroom.fraction * 100,
                   a.headroom.keep_band ? ", or the memory estimate's error band where wider" : "");
  h += fmt::format("<tr><td>electricity, PUE</td><td>${:.3f}/kWh, {:.2f}</td></tr></table>", c.own.electricity_usd_per_kwh, c.own.pue);
  return h;
}

std::string candidate_row(const Candidate& c, bool rejected, const ReportFigures& f) {
  if (rejected)
    return fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", esc(c.gpu), to_string(c.tier), esc(c.how()),
                       esc(c.rule), esc(c.why.text));
  return fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{}</td></tr>",
                     esc(c.gpu), to_string(c.tier), esc(c.how()), c.gpus, cost_with_band(c, f), time_with_band(c.training_time_s, f),
                     esc(c.price_date), c.pareto ? "Pareto front" : "");
}

}  // namespace

std::string render_html(const AdviseRequest& req, const Advice& a, const ReportFigures& f) {
  std::string h = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>gpuplan: " + esc(req.name) +
                  "</title><style>body{font-family:sans-serif;max-width:900px;margin:2em auto;color:#222}"
                  "table{border-collapse:collapse;width:100%;font-size:13px;margin-bottom:1em}td,th{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left}"
                  "td.n{text-align:right}.rec{background:#eef6ee;padding:1em;border-left:4px solid #59a14f}.meta{color:#555;font-size:13px}"
                  "</style></head><body>";
  h += "<h1>gpuplan advice: " + esc(req.name) + "</h1>";
  std::set<std::string> dates;
  for (const auto& c : a.candidates)
    if (!c.price_date.empty()) dates.insert(c.price_date);
  h += fmt::format("<p class='meta' id='meta'>Generated {} by {}. Prices dated {}.{}</p>", esc(f.generated_on), esc(f.version),
                   dates.empty() ? "(none quoted)" : esc(*dates.begin() + (dates.size() > 1 ? " to " + *dates.rbegin() : "")),
                   f.time_band ? fmt::format(" Times carry the model's 80% error band ({:.2f}x to {:.2f}x the estimate; {}); "
                                             "hourly rentals' costs carry it too.",
                                             f.time_band->low, f.time_band->high, esc(f.time_band->basis))
                               : "");
  if (a.recommendation) {
    const Candidate& r = *a.recommendation;
    h += fmt::format("<div class='rec'><h2>Recommendation: {} x {} ({}, {})</h2><p>Total {} over {:.0f} years{}.</p><ul>", r.gpus,
                     esc(r.gpu), to_string(r.tier), esc(r.how()), cost_with_band(r, f), a.horizon_years,
                     r.training_time_s > 0 ? "; all jobs take " + time_with_band(r.training_time_s, f) : "");
    for (const auto& reason : a.reasons) h += "<li>" + esc(reason.text) + "</li>";
    h += "</ul>";
    if (!a.caveats.empty()) h += "<h3>Caveats</h3><ul>";
    for (const auto& c : a.caveats) h += "<li>" + esc(c.text) + "</li>";
    h += std::string(a.caveats.empty() ? "" : "</ul>") + "</div>";
  } else {
    h += "<div class='rec'><h2>No option meets the constraints</h2><p>See the rejected list below.</p></div>";
  }
  h += inputs_section(req, a);
  h += memory_chart(f) + cost_chart(req, a, f) + roofline_chart(f);
  h += "<h2>Candidates</h2><table><tr><th>GPU</th><th>tier</th><th>how</th><th>GPUs</th><th>total cost</th><th>training time</th>"
       "<th>price date</th><th></th></tr>";
  for (const auto& c : a.candidates) h += candidate_row(c, false, f);
  h += "</table><h2>Rejected</h2><table><tr><th>GPU</th><th>tier</th><th>how</th><th>rule</th><th>why</th></tr>";
  for (const auto& c : a.rejected) h += candidate_row(c, true, f);
  h += fmt::format("</table><p><small>{} parallel layouts evaluated. Figures from gpuplan's data files (catalog, prices, "
                   "efficiencies), each with its source; see `gpuplan validate` for the model's error.</small></p></body></html>\n",
                   a.configs_evaluated);
  return h;
}

std::string render_markdown(const AdviseRequest& req, const Advice& a) {
  // Every string from the workload, the catalog or the advisor is escaped: none may add markup,
  // links or raw HTML to the document.
  const auto md = [](const std::string& s) { return markdown_escape(s); };
  std::string m = "# gpuplan advice: " + md(req.name) + "\n\n";
  if (a.recommendation) {
    const Candidate& r = *a.recommendation;
    m += fmt::format("**Recommendation: {} x {} ({}, {}), {} over {:.0f} years.**\n\n", r.gpus, md(r.gpu), to_string(r.tier),
                     md(r.how()), md(format_usd(r.total_cost_usd)), a.horizon_years);
    for (const auto& reason : a.reasons) m += "- " + md(reason.text) + "\n";
    if (!a.caveats.empty()) m += "\nCaveats:\n\n";
    for (const auto& c : a.caveats) m += "- " + md(c.text) + "\n";
  } else {
    m += "**No option meets the constraints.**\n";
  }
  m += "\n| GPU | tier | mode | GPUs | total cost | training time | |\n|---|---|---|---:|---:|---:|---|\n";
  for (const auto& c : a.candidates)
    m += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", md(c.gpu), to_string(c.tier), md(c.how()), c.gpus,
                     md(format_usd(c.total_cost_usd)), c.training_time_s > 0 ? md(format_seconds(c.training_time_s)) : "",
                     c.pareto ? "Pareto" : "");
  m += "\n## Rejected\n\n";
  for (const auto& c : a.rejected) m += fmt::format("- {} ({}, rule {}): {}\n", md(c.gpu), md(c.how()), md(c.rule), md(c.why.text));
  return m;
}

}  // namespace gpuplan
