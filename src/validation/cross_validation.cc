#include "validation/cross_validation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>


namespace gpuplan {

namespace {

// Each fitted parameter is pulled toward its sourced value (1, or efficiency.toml's allocator
// fraction) with the weight of one row that is 100% off per unit of change: a parameter moves
// only as far as several rows agree it should.
constexpr double kRidge = 1.0;
constexpr double kMinScale = 0.2, kMaxScale = 5.0;
// Reweighting rounds of the least-absolute-error fit, and the residual below which a row's weight
// stops growing (a row already within 2% does not take over the fit).
constexpr int kReweightings = 30;
constexpr double kResidualFloor = 0.02;

double clamp_scale(double x) { return std::clamp(x, kMinScale, kMaxScale); }

// Solves the N x N system a x = b (Gaussian elimination with partial pivoting).
template <size_t N>
std::array<double, N> solve(std::array<std::array<double, N>, N> a, std::array<double, N> b) {
  for (size_t col = 0; col < N; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < N; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = col + 1; r < N; ++r) {
      const double k = a[r][col] / a[col][col];
      for (size_t c = col; c < N; ++c) a[r][c] -= k * a[col][c];
      b[r] -= k * b[col];
    }
  }
  std::array<double, N> x{};
  for (size_t r = N; r-- > 0;) {
    double s = b[r];
    for (size_t c = r + 1; c < N; ++c) s -= a[r][c] * x[c];
    x[r] = s / a[r][r];
  }
  return x;
}

// ---- Training throughput: step = a x compute + b x memory-bound + c x communication ----------
// (communication by link: NVLink, PCIe, inter-node network, each its own scale)
// (and, with a negative sign, the tensor-parallel time the stack's overlap could hide)
constexpr size_t kTerms = 6;
using Scales = std::array<double, kTerms>;  // compute, memory, NVLink, PCIe, network, TP overlap
constexpr Scales kUnitScales = {1, 1, 1, 1, 1, 1};
constexpr size_t kTpOverlapTerm = 5;

Scales terms_of(const StepTerms& t) {
  return {t.compute_s, t.memory_s, t.comm_s - t.comm_pcie_s - t.comm_network_s, t.comm_pcie_s, t.comm_network_s, -t.tp_hidden_s};
}
double scaled(const Scales& s, const Scales& x) {
  double sum = 0;
  for (size_t j = 0; j < kTerms; ++j) sum += s[j] * x[j];
  return sum;
}
// The scaled terms, and the GPU's wait where the host takes longer over the micro-batches.
double step_seconds(const Scales& s, const FitTerms& t) {
  return scaled(s, terms_of(t)) + std::max(0.0, t.host_busy_s - scaled(s, terms_of(t.micro)));
}
Scales scales_of(const TrainingFit& f) {
  return {f.compute_scale, f.memory_scale, f.comm_scale, f.comm_scale_pcie, f.comm_scale_network, f.tp_overlap_scale};
}
void set_scales(TrainingFit& f, const Scales& s) {
  f.compute_scale = s[0], f.memory_scale = s[1], f.comm_scale = s[2], f.comm_scale_pcie = s[3], f.comm_scale_network = s[4];
  f.tp_overlap_scale = s[kTpOverlapTerm];
}

struct ThroughputModel {
  Scales global = kUnitScales;
  std::map<std::string, Scales> stacks;
  const Scales& for_stack(const std::string& stack) const {
    auto it = stacks.find(stack);
    return it != stacks.end() ? it->second : global;
  }
  double seconds(const ValidationRow& r) const { return step_seconds(for_stack(r.stack), r.fit.time); }
};

// Stacks with enough rows from at least two publications among `idx`.
std::set<std::string> stacks_with_rows(const std::vector<ValidationRow>& rows, const std::vector<size_t>& idx) {
  std::map<std::string, std::pair<int, std::set<std::string>>> seen;
  for (size_t i : idx) {
    auto& [n, pubs] = seen[rows[i].stack];
    ++n;
    pubs.insert(rows[i].publication);
  }
  std::set<std::string> out;
  for (const auto& [stack, v] : seen)
    if (v.first >= kMinStackRows && v.second.size() >= 2) out.insert(stack);
  return out;
}

// Least absolute relative step-time error over the rows `keep` accepts (the error validate scores),
// each scale pulled toward `prior` with the ridge weight: iteratively reweighted least squares, each
// row weighted by the inverse of its last residual, so a few rows the model cannot express do not
// drag the scales the way they would under squares.
// A row whose host takes longer than its scaled micro-batch terms is fitted on its other terms,
// the host's time taken off its published time (as the last round's scales say which rows those are).
Scales fit_scales(const std::vector<ValidationRow>& rows, const std::vector<size_t>& idx,
                  const std::function<bool(const ValidationRow&)>& keep, const Scales& prior) {
  std::vector<std::pair<Scales, double>> xs;  // terms over the published time, and the row's weight
  std::vector<Scales> micro;                  // the micro-batches' terms, likewise
  std::vector<double> host;                   // the host's time over the published time
  for (size_t i : idx) {
    const ValidationRow& r = rows[i];
    if (!keep(r)) continue;
    Scales x = terms_of(r.fit.time);
    for (double& v : x) v /= r.published_quantity();
    xs.emplace_back(x, 1.0);
    Scales xm = terms_of(r.fit.time.micro);
    for (double& v : xm) v /= r.published_quantity();
    micro.push_back(xm);
    host.push_back(r.fit.time.host_busy_s / r.published_quantity());
  }
  Scales theta = prior;
  for (int iteration = 0; iteration < kReweightings; ++iteration) {
    std::array<std::array<double, kTerms>, kTerms> a{};
    std::array<double, kTerms> b{};
    for (size_t i = 0; i < xs.size(); ++i) {
      const auto& [full, w] = xs[i];
      Scales x = full;
      double target = 1;
      if (host[i] > scaled(theta, micro[i])) {
        for (size_t j = 0; j < kTerms; ++j) x[j] -= micro[i][j];
        target -= host[i];
      }
      for (size_t j = 0; j < kTerms; ++j) {
        for (size_t k = 0; k < kTerms; ++k) a[j][k] += w * x[j] * x[k];
        b[j] += w * x[j] * target;
      }
    }
    for (size_t j = 0; j < kTerms; ++j) a[j][j] += kRidge, b[j] += kRidge * prior[j];
    theta = solve<kTerms>(a, b);
    // An overlap may hide nothing at all: its share alone may go down to zero.
    for (size_t j = 0; j < kTerms; ++j)
      theta[j] = j == kTpOverlapTerm ? std::clamp(theta[j], 0.0, kMaxScale) : clamp_scale(theta[j]);
    for (size_t i = 0; i < xs.size(); ++i) {
      auto& [x, w] = xs[i];
      const double fitted = scaled(theta, x) + std::max(0.0, host[i] - scaled(theta, micro[i]));
      w = 1.0 / std::max(std::fabs(fitted - 1.0), kResidualFloor);
    }
    // Weights averaging 1, so the ridge weighs as much against the rows as in the first round.
    double mean = 0;
    for (const auto& [x, w] : xs) mean += w / static_cast<double>(xs.size());
    for (auto& [x, w] : xs) w /= mean;
  }
  return theta;
}

// First the six scales on every row (ridge toward 1, the sourced model), then each well-covered
// stack's own six on its rows, pulled toward the global ones.
ThroughputModel fit_throughput(const std::vector<ValidationRow>& rows, const std::vector<size_t>& idx) {
  ThroughputModel m;
  m.global = fit_scales(rows, idx, [](const ValidationRow&) { return true; }, kUnitScales);
  for (const std::string& stack : stacks_with_rows(rows, idx))
    m.stacks[stack] = fit_scales(rows, idx, [&](const ValidationRow& r) { return r.stack == stack; }, m.global);
  return m;
}

// ---- Training memory: fixed + a x activations + reserve x (a x activations + workspaces) -----
struct MemoryModel {
  double activation = 1, reserve = 0.12;
  std::map<std::string, double> stack_activation;
  double activation_for(const std::string& stack) const {
    auto it = stack_activation.find(stack);
    return it != stack_activation.end() ? it->second : activation;
  }
  double bytes(const ValidationRow& r) const {
    const FitInputs& in = r.fit;
    const double act = activation_for(r.stack) * in.activation_bytes;
    return in.fixed_bytes + act + (in.counts_reserve ? reserve * (act + in.workspace_bytes) : 0);
  }
};

// For each reserve fraction on a fine grid the activation scale has a closed form; the pair with
// the least penalised squared relative error wins.
MemoryModel fit_memory(const std::vector<ValidationRow>& rows, const std::vector<size_t>& idx, double reserve_prior) {
  MemoryModel best{1, reserve_prior, {}};
  double best_cost = INFINITY;
  for (int step = 0; step <= 120; ++step) {
    const double rho = 0.005 * step;
    double uv = 0, uu = 0, vv = 0;
    for (size_t i : idx) {
      const FitInputs& in = rows[i].fit;
      const double p = rows[i].published_quantity(), res = in.counts_reserve ? rho : 0;
      const double u = (1 + res) * in.activation_bytes / p, v = 1 - (in.fixed_bytes + res * in.workspace_bytes) / p;
      uv += u * v, uu += u * u, vv += v * v;
    }
    const double alpha = clamp_scale((uv + kRidge) / (uu + kRidge));
    const double cost = alpha * alpha * uu - 2 * alpha * uv + vv + kRidge * (alpha - 1) * (alpha - 1) +
                        kRidge * (rho - reserve_prior) * (rho - reserve_prior);
    if (cost < best_cost) best_cost = cost, best = {alpha, rho, {}};
  }
  // Each well-covered stack's activation scale on its own rows, pulled toward the global one.
  for (const std::string& stack : stacks_with_rows(rows, idx)) {
    double uv = 0, uu = 0;
    for (size_t i : idx) {
      if (rows[i].stack != stack) continue;
      const FitInputs& in = rows[i].fit;
      const double p = rows[i].published_quantity(), res = in.counts_reserve ? best.reserve : 0;
      const double u = (1 + res) * in.activation_bytes / p, v = 1 - (in.fixed_bytes + res * in.workspace_bytes) / p;
      uv += u * v, uu += u * u;
    }
    best.stack_activation[stack] = clamp_scale((uv + kRidge * best.activation) / (uu + kRidge));
  }
  return best;
}

std::vector<size_t> rows_of(const ValidationReport& rep, const std::string& kind) {
  std::vector<size_t> out;
  for (size_t i = 0; i < rep.rows.size(); ++i)
    if (rep.rows[i].kind == kind) out.push_back(i);
  return out;
}

Score score(const ValidationReport& rep, const std::vector<size_t>& idx, bool cross) {
  Score s;
  std::set<std::string> pubs;
  for (size_t i : idx) {
    s.mape += std::fabs(cross ? rep.rows[i].cv_error() : rep.rows[i].error());
    pubs.insert(rep.rows[i].publication);
  }
  s.rows = static_cast<int>(idx.size());
  s.publications = static_cast<int>(pubs.size());
  if (s.rows) s.mape /= s.rows;
  return s;
}

// Runs leave-one-publication-out over the rows of one kind; fills predicted, cross_validated and
// the scores; returns each row's published / cross-validated quantity ratio.
template <class Model>
std::vector<double> score_kind(ValidationReport& rep, CrossValidation& cv, const std::string& kind,
                               const std::function<Model(const std::vector<size_t>&)>& fit,
                               const std::function<double(const Model&, const ValidationRow&)>& quantity, Model& all_rows) {
  const std::vector<size_t> idx = rows_of(rep, kind);
  std::vector<std::string> pubs;
  for (size_t i : idx) pubs.push_back(rep.rows[i].publication);
  const std::vector<double> held_out = leave_one_publication_out(pubs, [&](const std::vector<size_t>& train) {
    std::vector<size_t> rows;
    for (size_t j : train) rows.push_back(idx[j]);
    const Model m = fit(rows);
    return RowPredictor([m, &rep, &idx, &quantity](size_t j) { return quantity(m, rep.rows[idx[j]]); });
  });
  all_rows = fit(idx);
  std::vector<double> ratios;
  std::map<std::string, std::vector<size_t>> by_stack;
  for (size_t j = 0; j < idx.size(); ++j) {
    ValidationRow& r = rep.rows[idx[j]];
    r.cross_validated = r.fit.metric_at(held_out[j]);
    r.predicted = r.fit.metric_at(quantity(all_rows, r));
    ratios.push_back(r.published_quantity() / held_out[j]);
    by_stack[r.stack].push_back(idx[j]);
  }
  cv.cross_validated[kind] = score(rep, idx, true);
  cv.in_sample[kind] = score(rep, idx, false);
  for (const auto& [stack, rows] : by_stack)
    if (static_cast<int>(rows.size()) >= kMinStackRows) {
      cv.cross_validated_by_stack[kind][stack] = score(rep, rows, true);
      cv.in_sample_by_stack[kind][stack] = score(rep, rows, false);
    }
  return ratios;
}

// ---- Serving: one time scale per engine -----------------------------------------------------
// log(published / predicted) of a row's time (of its rate, negated) is the log of the scale that
// would have matched it. Fitted by least absolute log error, as the training fit minimises absolute
// error: the global scale is the median of the rows' log ratios, pulled toward 1 (the sourced
// figures) with the weight of one row; an engine with rows enough gets its own, pulled toward the
// global one. Each row's log ratio is capped at a factor of 3 either way, so that a few runs of a
// broken setup cannot move every engine.
struct ServingScales {
  double global = 1;
  std::map<std::string, double> engines;
  double for_engine(const std::string& e) const {
    auto it = engines.find(e);
    return it != engines.end() ? it->second : global;
  }
};

double serving_log_ratio(const ValidationRow& r, double unscaled) {
  const double x = std::log(r.published / unscaled) * (r.serving_rate ? -1 : 1);
  return std::clamp(x, -std::log(3.0), std::log(3.0));
}

// The log scale that minimises the absolute log error of `ratios` plus kRidge times its distance
// from `prior`: their weighted median with the prior as one more point.
double median_log_scale(const std::vector<double>& ratios, double prior) {
  std::vector<std::pair<double, double>> xw;
  for (double x : ratios) xw.emplace_back(x, 1.0);
  xw.emplace_back(prior, kRidge);
  std::sort(xw.begin(), xw.end());
  double total = 0;
  for (const auto& p : xw) total += p.second;
  double run = 0;
  for (const auto& [x, w] : xw)
    if ((run += w) >= total / 2) return x;
  return prior;
}

ServingScales fit_serving(const ValidationReport& rep, const std::vector<size_t>& idx, const std::vector<double>& unscaled) {
  std::vector<double> all;
  std::map<std::string, std::vector<double>> by_engine;
  std::map<std::string, std::set<std::string>> pubs;
  for (size_t j : idx) {
    const ValidationRow& r = rep.rows[j];
    const double x = serving_log_ratio(r, unscaled[j]);
    all.push_back(x);
    by_engine[r.engine].push_back(x);
    pubs[r.engine].insert(r.publication);
  }
  ServingScales s;
  const double g = median_log_scale(all, 0);
  s.global = clamp_scale(std::exp(g));
  for (const auto& [e, v] : by_engine)
    if (static_cast<int>(v.size()) >= kMinStackRows && pubs[e].size() >= 2) s.engines[e] = clamp_scale(std::exp(median_log_scale(v, g)));
  return s;
}

// ---- Serving: what engines.toml leaves to the fit ----------------------------------------------
// No kernel measurement gives a latency-bound quantised mat-vec's rate per SM, nor the efficiency
// of some engines' own prompt GEMMs, nor a serving frontend's time to take in a request, so they
// are fitted on fixed grids: the rate from 2 to 60 GB/s per SM 10% apart, or no bound; the
// prompt-GEMM multiplier from 0.3 to 1.5 5% apart, 1 (the GPU's curve as it is) tried first; the
// intake time from 0.25 to 16 ms, or none. Coordinate descent, two rounds: each knob in turn takes
// the grid value whose engine rows then have the least absolute log error with the time scales
// refitted at it (the value tried first on a tie). An engine's rows are run once at each tuple of
// values any fold tries, and shared by every fold.
std::vector<double> matvec_grid() {
  std::vector<double> g = {0};
  for (double r = 2e9; r <= 60e9; r *= 1.1) g.push_back(r);
  return g;
}

// The share of a per-query-head decode kernel's repeated cache reads that reaches DRAM: from every
// read (the kernel's loads as written, first) down to none.
std::vector<double> kv_share_grid() {
  std::vector<double> g;
  for (int k = 20; k >= 0; --k) g.push_back(k / 20.0);
  return g;
}

// The serving frontend's time to take in one request: none, then 0.25 ms to 16 ms, each about 1.4x
// the last.
std::vector<double> frontend_grid() {
  std::vector<double> g = {0};
  for (double s = 0.25e-3; s <= 16.01e-3; s *= std::sqrt(2.0)) g.push_back(s);
  return g;
}

std::vector<double> prefill_grid() {
  std::vector<double> g = {1};
  for (int k = -25; k <= 8; ++k)
    if (k != 0) g.push_back(std::pow(1.05, k));
  return g;
}

struct ServingFit {
  ServingScales scales;
  std::map<std::string, double> matvec_sm_Bps;       // engine -> bytes/s per SM
  std::map<std::string, double> prefill_matmul_scale;  // engine -> multiplier
  std::map<std::string, double> kv_share;              // engine -> per-query-head DRAM share
  std::map<std::string, double> frontend_request_s;    // engine -> seconds to take in a request
  ServingKnobs knobs(const std::string& engine) const {
    auto m = matvec_sm_Bps.find(engine);
    auto p = prefill_matmul_scale.find(engine);
    auto q = kv_share.find(engine);
    auto f = frontend_request_s.find(engine);
    return {scales.for_engine(engine), m != matvec_sm_Bps.end() ? m->second : 0,
            p != prefill_matmul_scale.end() ? p->second : 1, q != kv_share.end() ? q->second : 1,
            f != frontend_request_s.end() ? f->second : 0};
  }
};

// Whether `k` changes row `r`'s prediction from the one under the sourced engine.
bool moves(const ValidationRow& r, const ServingKnobs& k) {
  return k.time_scale != 1 || (r.serving_matvec_bound && k.matvec_sm_Bps > 0) || (r.serving_prefill_fitted && k.prefill_matmul_scale != 1) ||
         (r.serving_per_query_head && k.per_query_head_kv_share != 1) || (r.serving_frontend && k.frontend_request_s != 0);
}

// The serving rows predicted at time scale 1 under each tuple of grid values (matvec, prefill,
// KV-share and frontend indices) an engine's fit asks for, run the first time they are asked for.
class KnobGridRuns {
 public:
  KnobGridRuns(const ValidationReport& rep, const std::vector<size_t>& idx, const std::vector<double>& unscaled)
      : rep_(rep), idx_(idx), unscaled_(unscaled), matvec_(matvec_grid()), prefill_(prefill_grid()), kv_share_(kv_share_grid()),
        frontend_(frontend_grid()) {}
  const std::vector<double>& matvec() const { return matvec_; }
  const std::vector<double>& prefill() const { return prefill_; }
  const std::vector<double>& kv_share() const { return kv_share_; }
  const std::vector<double>& frontend() const { return frontend_; }
  // Row j's prediction (index into the report) with engine `e`'s knobs at (m, p, q, f).
  const std::vector<double>& at(const std::string& e, size_t m, size_t p, size_t q, size_t f) {
    auto [it, fresh] = runs_.try_emplace({e, m, p, q, f});
    if (fresh) {
      it->second = unscaled_;
      for (size_t j : idx_) {
        const ValidationRow& r = rep_.rows[j];
        if (r.engine != e) continue;
        const ServingKnobs k{1, matvec_[m], prefill_[p], kv_share_[q], frontend_[f]};
        if (moves(r, k)) it->second[j] = r.serving_at(k);
      }
    }
    return it->second;
  }

 private:
  const ValidationReport& rep_;
  const std::vector<size_t>& idx_;
  const std::vector<double>& unscaled_;
  std::vector<double> matvec_, prefill_, kv_share_, frontend_;
  std::map<std::tuple<std::string, size_t, size_t, size_t, size_t>, std::vector<double>> runs_;
};

ServingFit fit_serving_knobs(const ValidationReport& rep, const std::vector<size_t>& idx, const std::vector<double>& unscaled,
                             KnobGridRuns& runs) {
  std::set<std::string> matvec_engines, prefill_engines, kv_share_engines, frontend_engines;
  for (size_t j : idx) {
    if (rep.rows[j].serving_matvec_bound) matvec_engines.insert(rep.rows[j].engine);
    if (rep.rows[j].serving_prefill_fitted) prefill_engines.insert(rep.rows[j].engine);
    if (rep.rows[j].serving_per_query_head) kv_share_engines.insert(rep.rows[j].engine);
    if (rep.rows[j].serving_frontend) frontend_engines.insert(rep.rows[j].engine);
  }
  std::set<std::string> engines = matvec_engines;
  engines.insert(prefill_engines.begin(), prefill_engines.end());
  engines.insert(kv_share_engines.begin(), kv_share_engines.end());
  engines.insert(frontend_engines.begin(), frontend_engines.end());
  std::vector<double> base = unscaled;
  ServingFit fit;
  for (const std::string& e : engines) {
    auto with_engine_at = [&](size_t m, size_t p, size_t q, size_t fr) {
      std::vector<double> trial = base;
      const std::vector<double>& run = runs.at(e, m, p, q, fr);
      for (size_t j : idx)
        if (rep.rows[j].engine == e && std::isfinite(run[j])) trial[j] = run[j];
      return trial;
    };
    auto error_at = [&](size_t m, size_t p, size_t q, size_t fr) {
      const std::vector<double> trial = with_engine_at(m, p, q, fr);
      const double k = std::log(fit_serving(rep, idx, trial).for_engine(e));
      double err = 0;
      for (size_t j : idx)
        if (rep.rows[j].engine == e) err += std::fabs(serving_log_ratio(rep.rows[j], trial[j]) - k);
      return err;
    };
    // The grid index whose error is least (the first on a tie).
    auto best_of = [](size_t count, const auto& error_with) {
      size_t best = 0;
      double least = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < count; ++i)
        if (const double err = error_with(i); err < least - 1e-12) least = err, best = i;
      return best;
    };
    size_t m = 0, p = 0, q = 0, fr = 0;
    for (int round = 0; round < 2; ++round) {
      if (matvec_engines.count(e)) m = best_of(runs.matvec().size(), [&](size_t i) { return error_at(i, p, q, fr); });
      if (prefill_engines.count(e)) p = best_of(runs.prefill().size(), [&](size_t i) { return error_at(m, i, q, fr); });
      if (kv_share_engines.count(e)) q = best_of(runs.kv_share().size(), [&](size_t i) { return error_at(m, p, i, fr); });
      if (frontend_engines.count(e)) fr = best_of(runs.frontend().size(), [&](size_t i) { return error_at(m, p, q, i); });
    }
    if (runs.matvec()[m] > 0) fit.matvec_sm_Bps[e] = runs.matvec()[m];
    if (runs.prefill()[p] != 1) fit.prefill_matmul_scale[e] = runs.prefill()[p];
    if (runs.kv_share()[q] != 1) fit.kv_share[e] = runs.kv_share()[q];
    if (runs.frontend()[fr] > 0) fit.frontend_request_s[e] = runs.frontend()[fr];
    base = with_engine_at(m, p, q, fr);
  }
  fit.scales = fit_serving(rep, idx, base);
  return fit;
}

// Fits and scores the serving rows leave-one-publication-out. Every row is run again at the
// parameters its fold chose (the simulator, not a linear guess), and at those of the fit on all rows.
void cross_validate_serving(ValidationReport& rep, CrossValidation& cv) {
  const std::vector<size_t> idx = rows_of(rep, "serving");
  if (idx.empty()) return;
  std::vector<double> unscaled(rep.rows.size(), 0);
  for (size_t i : idx) unscaled[i] = rep.rows[i].predicted;  // run under the sourced engine
  KnobGridRuns runs(rep, idx, unscaled);
  std::vector<std::string> pubs;
  for (size_t i : idx) pubs.push_back(rep.rows[i].publication);
  const std::vector<double> held_out = leave_one_publication_out(pubs, [&](const std::vector<size_t>& train) {
    std::vector<size_t> rows;
    for (size_t j : train) rows.push_back(idx[j]);
    const ServingFit s = fit_serving_knobs(rep, rows, unscaled, runs);
    return RowPredictor([s, &rep, &idx](size_t j) {
      const ValidationRow& r = rep.rows[idx[j]];
      return r.serving_at(s.knobs(r.engine));
    });
  });
  const ServingFit all = fit_serving_knobs(rep, idx, unscaled, runs);
  std::map<std::string, std::vector<size_t>> by_engine, by_load;
  for (size_t j = 0; j < idx.size(); ++j) {
    ValidationRow& r = rep.rows[idx[j]];
    r.cross_validated = held_out[j];
    const ServingKnobs k = all.knobs(r.engine);
    r.predicted = moves(r, k) ? r.serving_at(k) : unscaled[idx[j]];
    by_engine[r.engine].push_back(idx[j]);
    by_load[r.load].push_back(idx[j]);
  }
  cv.cross_validated["serving"] = score(rep, idx, true);
  cv.in_sample["serving"] = score(rep, idx, false);
  for (const auto& [engine, rows] : by_engine) {
    cv.cross_validated_by_stack["serving"][engine] = score(rep, rows, true);
    cv.in_sample_by_stack["serving"][engine] = score(rep, rows, false);
  }
  for (const auto& [load, rows] : by_load) cv.serving_by_load[load] = score(rep, rows, true);
  cv.fitted.serving_time_scale = all.scales.global;
  cv.fitted.serving_engine_time_scale = all.scales.engines;
  cv.fitted.serving_matvec_sm_Bps = all.matvec_sm_Bps;
  cv.fitted.serving_prefill_matmul_scale = all.prefill_matmul_scale;
  cv.fitted.serving_per_query_head_kv_share = all.kv_share;
  cv.fitted.serving_frontend_request_s = all.frontend_request_s;
}

// Bands per stack where a stack has enough rows of the kind, else none (the global one serves).
std::map<std::string, FitBand> stack_bands(const ValidationReport& rep, const std::string& kind,
                                             const std::vector<double>& ratios) {
  std::map<std::string, std::vector<double>> by_stack;
  const std::vector<size_t> idx = rows_of(rep, kind);
  for (size_t j = 0; j < idx.size(); ++j) by_stack[rep.rows[idx[j]].stack].push_back(ratios[j]);
  std::map<std::string, FitBand> out;
  for (auto& [stack, r] : by_stack)
    if (static_cast<int>(r.size()) >= kMinStackRows) out[stack] = band_of(r);
  return out;
}

// Memory bands per task class where a class has enough rows from two publications or more.
std::map<std::string, FitBand> task_bands(const ValidationReport& rep, const std::vector<double>& ratios) {
  std::map<std::string, std::vector<double>> by_task;
  std::map<std::string, std::set<std::string>> pubs;
  const std::vector<size_t> idx = rows_of(rep, "train_memory");
  for (size_t j = 0; j < idx.size(); ++j) {
    const ValidationRow& r = rep.rows[idx[j]];
    by_task[r.task_class].push_back(ratios[j]);
    pubs[r.task_class].insert(r.publication);
  }
  std::map<std::string, FitBand> out;
  for (auto& [task, r] : by_task)
    if (static_cast<int>(r.size()) >= kMinStackRows && pubs[task].size() >= 2) out[task] = band_of(r);
  return out;
}

}  // namespace

std::vector<double> leave_one_publication_out(const std::vector<std::string>& publication_of_row,
                                              const std::function<RowPredictor(const std::vector<size_t>&)>& fit) {
  std::vector<double> out(publication_of_row.size(), 0);
  const std::set<std::string> pubs(publication_of_row.begin(), publication_of_row.end());
  for (const std::string& held : pubs) {
    std::vector<size_t> train;
    for (size_t i = 0; i < publication_of_row.size(); ++i)
      if (publication_of_row[i] != held) train.push_back(i);
    const RowPredictor predict = fit(train);
    for (size_t i = 0; i < publication_of_row.size(); ++i)
      if (publication_of_row[i] == held) out[i] = predict(i);
  }
  return out;
}

FitBand band_of(std::vector<double> ratios) {
  FitBand b;
  if (ratios.empty()) return b;
  std::sort(ratios.begin(), ratios.end());
  auto pct = [&](double p) {
    const double x = p * static_cast<double>(ratios.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(x));
    const size_t hi = std::min(lo + 1, ratios.size() - 1);
    return ratios[lo] + (x - static_cast<double>(lo)) * (ratios[hi] - ratios[lo]);
  };
  b.low = pct(0.10);
  b.high = pct(0.90);
  b.rows = static_cast<int>(ratios.size());
  return b;
}

CrossValidation cross_validate(ValidationReport& rep, double allocator_prior) {
  CrossValidation cv;
  ThroughputModel tm;
  const std::vector<double> t_ratios = score_kind<ThroughputModel>(
      rep, cv, "train_throughput", [&](const std::vector<size_t>& idx) { return fit_throughput(rep.rows, idx); },
      [](const ThroughputModel& m, const ValidationRow& r) { return m.seconds(r); }, tm);
  MemoryModel mm;
  const std::vector<double> m_ratios = score_kind<MemoryModel>(
      rep, cv, "train_memory", [&](const std::vector<size_t>& idx) { return fit_memory(rep.rows, idx, allocator_prior); },
      [](const MemoryModel& m, const ValidationRow& r) { return m.bytes(r); }, mm);

  cross_validate_serving(rep, cv);
  TrainingFit& g = cv.fitted.global;
  set_scales(g, tm.global);
  g.activation_scale = mm.activation, g.allocator_fraction = mm.reserve;
  g.throughput_band = band_of(t_ratios);
  g.memory_band = band_of(m_ratios);
  g.memory_band_by_task = task_bands(rep, m_ratios);
  const auto t_bands = stack_bands(rep, "train_throughput", t_ratios);
  const auto m_bands = stack_bands(rep, "train_memory", m_ratios);
  std::set<std::string> stacks;
  for (const auto& [s, v] : tm.stacks) stacks.insert(s);
  for (const auto& [s, v] : mm.stack_activation) stacks.insert(s);
  for (const auto& [s, v] : t_bands) stacks.insert(s);
  for (const auto& [s, v] : m_bands) stacks.insert(s);
  for (const std::string& s : stacks) {
    TrainingFit f = g;
    set_scales(f, tm.for_stack(s));
    f.activation_scale = mm.activation_for(s);
    if (auto it = t_bands.find(s); it != t_bands.end()) f.throughput_band = it->second;
    if (auto it = m_bands.find(s); it != m_bands.end()) f.memory_band = it->second;
    cv.fitted.stacks[s] = f;
  }
  return cv;
}

void apply_fit(ValidationReport& rep, const FittedParameters& fitted, double allocator_prior) {
  for (ValidationRow& r : rep.rows) {
    const TrainingFit& f = fitted.for_stack(r.stack);
    if (r.kind == "train_throughput" || r.section == "moe_training") {
      r.predicted = r.fit.metric_at(step_seconds(scales_of(f), r.fit.time));
    } else if (r.kind == "train_memory") {
      MemoryModel m{f.activation_scale, f.allocator_fraction >= 0 ? f.allocator_fraction : allocator_prior, {}};
      r.predicted = r.fit.metric_at(m.bytes(r));
    }
  }
}

}  // namespace gpuplan

namespace gpuplan {

namespace {
ValidatedTable fitted(ValidationReport rep, const EfficiencyTable& eff) {
  ValidatedTable out{std::move(rep), {}};
  const double prior = eff.for_gpu(Gpu{}).allocator_fraction;
  out.cv = cross_validate(out.report, prior);
  apply_fit(out.report, out.cv.fitted, prior);
  return out;
}
}  // namespace

// The rows' fit inputs are taken under the sourced figures alone; the fit starts from them.
Result<ValidatedTable> run_cross_validation(std::string_view toml_text, const std::string& origin, const Catalog& catalog,
                                            const EfficiencyTable& eff) {
  auto rep = run_validation(toml_text, origin, catalog, eff.without_fit());
  if (!rep) return rep.error();
  return fitted(std::move(rep).value(), eff);
}

Result<ValidatedTable> run_builtin_cross_validation(const Catalog& catalog, const EfficiencyTable& eff) {
  auto rep = run_builtin_validation(catalog, eff.without_fit());
  if (!rep) return rep.error();
  return fitted(std::move(rep).value(), eff);
}

}  // namespace gpuplan
