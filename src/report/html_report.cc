#include "report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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

std::string cost_chart(const Advice& a) {
  if (a.candidates.empty()) return "";
  double max_cost = 0, min_cost = 1e300, max_t = 0;
  for (const auto& c : a.candidates) {
    max_cost = std::max(max_cost, c.total_cost_usd);
    min_cost = std::min(min_cost, std::max(1.0, c.total_cost_usd));
    max_t = std::max(max_t, c.training_time_s);
  }
  // Costs often span orders of magnitude (renting for hours against buying servers): log axis then.
  const bool log_y = max_cost / min_cost > 20;
  const double ly0 = std::log10(min_cost) - 0.1, ly1 = std::log10(max_cost) + 0.1;
  auto ynorm = [&](double usd) {
    return log_y ? (std::log10(std::max(1.0, usd)) - ly0) / (ly1 - ly0) : usd / max_cost;
  };
  const bool has_time = max_t > 0;
  const double X0 = 70, Y0 = 330, W = 680, H = 290;
  std::string svg = "<svg viewBox='0 0 800 380' width='800' height='380' role='img' aria-label='cost against time'>";
  svg += fmt::format("<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='black'/><line x1='{0}' y1='{1}' x2='{0}' y2='{3}' stroke='black'/>",
                     X0, Y0, X0 + W, Y0 - H);
  svg += fmt::format("<text x='{}' y='370' font-size='12' text-anchor='middle'>{}</text>", X0 + W / 2,
                     has_time ? "training time (days)" : "candidates, cheapest first");
  svg += fmt::format("<text x='15' y='{}' font-size='12' transform='rotate(-90 15 {})' text-anchor='middle'>total cost (USD{})</text>",
                     Y0 - H / 2, Y0 - H / 2, log_y ? ", log scale" : "");
  for (int k = 0; k <= 4; ++k) {
    const double y = Y0 - H * k / 4.0;
    const double usd = log_y ? std::pow(10, ly0 + (ly1 - ly0) * k / 4.0) : max_cost * k / 4.0;
    svg += fmt::format("<text x='{}' y='{:.0f}' font-size='10' text-anchor='end'>{}</text>", X0 - 4, y + 3, format_usd(usd));
    if (has_time)
      svg += fmt::format("<text x='{:.0f}' y='{}' font-size='10' text-anchor='middle'>{:.1f}</text>", X0 + W * k / 4.0, Y0 + 14, max_t * k / 4.0 / 86400);
  }
  std::vector<std::pair<double, double>> front;
  for (size_t i = 0; i < a.candidates.size(); ++i) {
    const Candidate& c = a.candidates[i];
    const double x = has_time ? X0 + W * c.training_time_s / max_t : X0 + W * (i + 0.5) / a.candidates.size();
    const double y = Y0 - H * ynorm(c.total_cost_usd);
    if (c.pareto) front.emplace_back(x, y);
    svg += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='{}' fill='{}'><title>{} x {} {}: {}{}</title></circle>", x, y,
                       i == 0 ? 7 : 5, c.mode == "buy" ? "#e15759" : "#4e79a7", c.gpus, esc(c.gpu), esc(c.mode),
                       format_usd(c.total_cost_usd), has_time ? ", " + format_seconds(c.training_time_s) : "");
    if (i == 0 || c.pareto)
      svg += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='10'>{} {}</text>", x + 7, y - 4, esc(c.gpu), esc(c.mode));
  }
  std::sort(front.begin(), front.end());
  if (front.size() > 1) {
    std::string pts;
    for (auto [x, y] : front) pts += fmt::format("{:.1f},{:.1f} ", x, y);
    svg += "<polyline fill='none' stroke='#59a14f' stroke-width='2' points='" + pts + "'/>";
  }
  svg += "<text x='600' y='30' font-size='11' fill='#4e79a7'>● rent</text><text x='660' y='30' font-size='11' fill='#e15759'>● buy</text>"
         "<text x='710' y='30' font-size='11' fill='#59a14f'>— Pareto</text></svg>";
  return "<h2>Cost against time</h2>" + svg;
}

std::string roofline_chart(const ReportFigures& f) {
  if (!f.roofline) return "";
  const RooflineReport& r = *f.roofline;
  // Log-log axes: intensity 0.1 .. 10^4 FLOP/byte, throughput 10^9 .. peak x 2.
  const double X0 = 70, Y0 = 330, W = 680, H = 290;
  const double lx0 = -1, lx1 = 4, ly1 = std::log10(r.peak_flops * 2), ly0 = ly1 - 6;
  auto px = [&](double i) { return X0 + W * (std::log10(std::max(i, 1e-1)) - lx0) / (lx1 - lx0); };
  auto py = [&](double f) { return Y0 - H * (std::log10(std::max(f, std::pow(10, ly0))) - ly0) / (ly1 - ly0); };
  std::string svg = "<svg viewBox='0 0 800 380' width='800' height='380' role='img' aria-label='roofline'>";
  svg += fmt::format("<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='black'/><line x1='{0}' y1='{1}' x2='{0}' y2='{3}' stroke='black'/>",
                     X0, Y0, X0 + W, Y0 - H);
  for (int e = -1; e <= 4; ++e)
    svg += fmt::format("<text x='{:.0f}' y='{}' font-size='10' text-anchor='middle'>10^{}</text>", px(std::pow(10, e)), Y0 + 14, e);
  svg += fmt::format("<text x='{}' y='370' font-size='12' text-anchor='middle'>arithmetic intensity (FLOP/byte)</text>", X0 + W / 2);
  svg += fmt::format("<text x='15' y='{0}' font-size='12' transform='rotate(-90 15 {0})' text-anchor='middle'>attainable FLOP/s</text>", Y0 - H / 2);
  // Roof: bandwidth slope up to the ridge point, then the compute ceiling.
  const double i0 = 0.1, ir = r.ridge_point, i1 = 1e4;
  svg += fmt::format("<polyline fill='none' stroke='black' stroke-width='2' points='{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}'/>",
                     px(i0), py(i0 * r.bandwidth_Bps), px(ir), py(r.peak_flops), px(i1), py(r.peak_flops));
  svg += fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='11'>ridge {:.0f} FLOP/B, peak {}</text>", px(ir) + 5, py(r.peak_flops) - 6,
                     r.ridge_point, format_flops(r.peak_flops));
  for (const auto& op : r.ops) {
    if (op.intensity <= 0) continue;
    const double attained = std::min(r.peak_flops, op.intensity * r.bandwidth_Bps);
    svg += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='4' fill='{}'><title>{}: {:.1f} FLOP/B, {}-bound</title></circle>",
                       px(op.intensity), py(attained), op.memory_bound ? "#e15759" : "#4e79a7", esc(op.name), op.intensity,
                       op.memory_bound ? "memory" : "compute");
  }
  svg += "<text x='560' y='30' font-size='11' fill='#4e79a7'>● compute-bound</text><text x='670' y='30' font-size='11' fill='#e15759'>● memory-bound</text></svg>";
  return "<h2>Roofline: " + esc(f.roofline_title) + "</h2>" + svg;
}

std::string candidate_row(const Candidate& c, bool rejected) {
  return fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td></tr>",
                     esc(c.gpu), to_string(c.tier), esc(c.how()), rejected ? "" : std::to_string(c.gpus),
                     rejected ? "" : format_usd(c.total_cost_usd),
                     rejected || c.training_time_s == 0 ? "" : format_seconds(c.training_time_s),
                     rejected ? esc(c.why.text) : (c.pareto ? "Pareto front" : ""));
}

}  // namespace

std::string render_html(const AdviseRequest& req, const Advice& a, const ReportFigures& f) {
  std::string h = "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>gpuplan: " + esc(req.name) +
                  "</title><style>body{font-family:sans-serif;max-width:900px;margin:2em auto;color:#222}"
                  "table{border-collapse:collapse;width:100%;font-size:13px}td,th{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left}"
                  "td.n{text-align:right}.rec{background:#eef6ee;padding:1em;border-left:4px solid #59a14f}</style></head><body>";
  h += "<h1>gpuplan advice: " + esc(req.name) + "</h1>";
  if (a.recommendation) {
    const Candidate& r = *a.recommendation;
    h += fmt::format("<div class='rec'><h2>Recommendation: {} x {} ({}, {})</h2><p>Total {} over {:.0f} years.</p><ul>", r.gpus,
                     esc(r.gpu), to_string(r.tier), esc(r.how()), format_usd(r.total_cost_usd), a.horizon_years);
    for (const auto& reason : a.reasons) h += "<li>" + esc(reason.text) + "</li>";
    h += "</ul>";
    if (!a.caveats.empty()) h += "<h3>Caveats</h3><ul>";
    for (const auto& c : a.caveats) h += "<li>" + esc(c.text) + "</li>";
    h += std::string(a.caveats.empty() ? "" : "</ul>") + "</div>";
  } else {
    h += "<div class='rec'><h2>No option meets the constraints</h2><p>See the rejected list below.</p></div>";
  }
  h += memory_chart(f) + cost_chart(a) + roofline_chart(f);
  h += "<h2>Candidates</h2><table><tr><th>GPU</th><th>tier</th><th>mode</th><th>GPUs</th><th>total cost</th><th>training time</th><th></th></tr>";
  for (const auto& c : a.candidates) h += candidate_row(c, false);
  h += "</table><h2>Rejected</h2><table><tr><th>GPU</th><th>tier</th><th>mode</th><th></th><th></th><th></th><th>why</th></tr>";
  for (const auto& c : a.rejected) h += candidate_row(c, true);
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
