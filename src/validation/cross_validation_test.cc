// Leave-one-publication-out scoring and the fit behind data/fitted.toml: the held-out publication
// never reaches the fit, the fit recovers scales it is shown, the shipped file is what the fit
// writes, and the cross-validated error of the built-in table stays within its targets.
#include "validation/cross_validation.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "data/embedded.h"
#include "validation/validation_test_support.h"

namespace gpuplan {

namespace {

const ValidatedTable& builtin() { return testing_support::builtin_validated_table(); }

// A throughput row whose published step time is `published_s` and whose unfitted terms are given.
ValidationRow throughput_row(const std::string& pub, const std::string& stack, double compute, double memory, double comm,
                             double published_s) {
  ValidationRow r;
  r.kind = "train_throughput";
  r.publication = pub;
  r.stack = stack;
  r.metric = "step_time_s";
  r.fit.time.compute_s = compute, r.fit.time.memory_s = memory, r.fit.time.comm_s = comm;
  r.fit.raw_quantity = compute + memory + comm;
  r.fit.raw_metric = r.fit.raw_quantity;
  r.fit.inverse = false;
  r.published = published_s;
  return r;
}

}  // namespace

TEST(LeaveOnePublicationOut, NeverFitsOnTheHeldOutPublication) {
  const std::vector<std::string> pubs = {"a", "b", "a", "c", "b"};
  const std::vector<double> out = leave_one_publication_out(pubs, [&](const std::vector<size_t>& train) {
    std::set<std::string> seen;
    for (size_t i : train) seen.insert(pubs[i]);
    // Predicts, for a row, how many of the training rows share its publication: always 0.
    return RowPredictor([seen, &pubs](size_t i) { return static_cast<double>(seen.count(pubs[i])); });
  });
  for (double x : out) EXPECT_EQ(x, 0);
}

TEST(LeaveOnePublicationOut, BandTakesTheTenthAndNinetiethPercentiles) {
  const FitBand b = band_of({11, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(b.low, 2);
  EXPECT_DOUBLE_EQ(b.high, 10);
  EXPECT_EQ(b.rows, 11);
  EXPECT_EQ(band_of({}).rows, 0);
}

// Rows whose compute runs 1.3x slower than modelled, memory-bound work 0.8x, comm as modelled:
// with many rows the ridge (one row's weight per parameter) barely pulls, and the fit finds the
// scales.
TEST(LeaveOnePublicationOut, FitRecoversTheScalesOfSyntheticRows) {
  ValidationReport rep;
  for (int i = 0; i < 600; ++i) {
    const double c = 1 + i % 7, m = 0.5 + (i % 5) * 0.3, x = 0.2 + (i % 3) * 0.4;
    rep.rows.push_back(throughput_row(fmt::format("p{}", i % 6), "s", c, m, x, 1.3 * c + 0.8 * m + x));
  }
  const CrossValidation cv = cross_validate(rep, 0.12);
  const TrainingFit& f = cv.fitted.for_stack("s");
  EXPECT_NEAR(f.compute_scale, 1.3, 0.03);
  EXPECT_NEAR(f.memory_scale, 0.8, 0.05);
  EXPECT_NEAR(f.comm_scale, 1.0, 0.05);
  EXPECT_LT(cv.cross_validated.at("train_throughput").mape, 0.02);
  EXPECT_EQ(cv.cross_validated.at("train_throughput").publications, 6);
}

// The same synthetic rows, a third of them host-bound: their published time is the host's, longer
// than their scaled terms. Those rows say nothing of the scales (any scale predicts them right); the
// fit still finds the others' and predicts the host-bound ones at the host's time.
TEST(LeaveOnePublicationOut, HostBoundRowsNeitherDragTheScalesNorMissTheirFloor) {
  ValidationReport rep;
  for (int i = 0; i < 600; ++i) {
    const double c = 1 + i % 7, m = 0.5 + (i % 5) * 0.3, x = 0.2 + (i % 3) * 0.4;
    const double gpu_s = 1.3 * c + 0.8 * m + x;
    ValidationRow r = throughput_row(fmt::format("p{}", i % 6), "s", c, m, x, gpu_s);
    if (i % 3 == 0) {
      r.fit.time.micro = r.fit.time;  // every term is the micro-batches'
      r.fit.time.host_busy_s = r.published = 2 * gpu_s;
    }
    rep.rows.push_back(r);
  }
  const CrossValidation cv = cross_validate(rep, 0.12);
  const TrainingFit& f = cv.fitted.for_stack("s");
  EXPECT_NEAR(f.compute_scale, 1.3, 0.03);
  EXPECT_NEAR(f.memory_scale, 0.8, 0.05);
  EXPECT_LT(cv.cross_validated.at("train_throughput").mape, 0.02);
}

// Serving rows of one engine whose quantised mat-vec streams at 11 GB/s per SM, their times 1.2x
// the model's besides: on HBM-like cards (108 SMs, 2 TB/s) that rate binds, on GeForce-like ones
// (128 SMs, 1 TB/s) the bandwidth does. The grid fit finds the rate within its 10% step, and the
// time scale with it.
TEST(LeaveOnePublicationOut, ServingFitFindsALatencyBoundMatVecRatePerSm) {
  ValidationReport rep;
  for (int i = 0; i < 60; ++i) {
    const bool hbm = i % 2 == 0;
    const double bw = hbm ? 2e12 : 1e12, sms = hbm ? 108 : 128, bytes = 4e9 + 1e9 * (i % 5);
    auto time_at = [bw, sms, bytes](const ServingKnobs& k) {
      const double stream = k.matvec_sm_Bps > 0 ? std::min(0.85 * bw, sms * k.matvec_sm_Bps) : 0.85 * bw;
      return k.time_scale * bytes / stream;
    };
    ValidationRow r;
    r.kind = "serving";
    r.engine = "e";
    r.publication = fmt::format("p{}", i % 6);
    r.metric = "tpot_s";
    r.serving_matvec_bound = true;
    r.serving_at = time_at;
    r.predicted = time_at({});
    r.published = time_at({1.2, 11e9});
    rep.rows.push_back(r);
  }
  const CrossValidation cv = cross_validate(rep, 0.12);
  EXPECT_NEAR(cv.fitted.serving_matvec_sm_Bps_for("e") / 11e9, 1.0, 0.06);
  EXPECT_NEAR(cv.fitted.serving_time_scale_for("e"), 1.2, 0.07);
  EXPECT_LT(cv.cross_validated.at("serving").mape, 0.07);
}

// Serving rows of one engine whose bursts queue at its frontend: each row's first token waits for
// the n requests before it to be taken in at 2 ms each, beside a GPU time 1.1x the model's; its
// decode rows do not move with the frontend. The grid fit finds the intake time, and the scale.
TEST(LeaveOnePublicationOut, ServingFitFindsAFrontendsTimeToTakeInARequest) {
  ValidationReport rep;
  for (int i = 0; i < 60; ++i) {
    const bool queued = i % 2 == 0;
    const double gpu_s = 0.5 + 0.1 * (i % 7), waiting = 100.0 + 50.0 * (i % 5);
    auto time_at = [queued, gpu_s, waiting](const ServingKnobs& k) {
      return k.time_scale * gpu_s + (queued ? waiting * k.frontend_request_s : 0);
    };
    ValidationRow r;
    r.kind = "serving";
    r.engine = "e";
    r.publication = fmt::format("p{}", i % 6);
    r.metric = queued ? "ttft_s" : "tpot_s";
    r.serving_frontend = queued;
    r.serving_at = time_at;
    r.predicted = time_at({});
    ServingKnobs truth;
    truth.time_scale = 1.1;
    truth.frontend_request_s = 2e-3;
    r.published = time_at(truth);
    rep.rows.push_back(r);
  }
  const CrossValidation cv = cross_validate(rep, 0.12);
  EXPECT_NEAR(cv.fitted.serving_frontend_request_s_for("e") / 2e-3, 1.0, 0.01);
  EXPECT_NEAR(cv.fitted.serving_time_scale_for("e"), 1.1, 0.02);
  EXPECT_LT(cv.cross_validated.at("serving").mape, 0.02);
}

// Serving rows of one engine whose prompt GEMMs run at 0.7 of the GPU's curve and whose times are
// 1.1x the model's besides: half are prefill (time to first token), half decode. The fit finds the
// multiplier within its 5% step, and the time scale with it; rows of an engine that leaves its
// prompt GEMMs to their measured curve keep 1.
TEST(LeaveOnePublicationOut, ServingFitFindsAnEnginesPromptGemmEfficiency) {
  ValidationReport rep;
  for (int i = 0; i < 60; ++i) {
    const bool prefill = i % 2 == 0;
    const double base = 0.05 + 0.01 * (i % 7);
    auto time_at = [prefill, base](const ServingKnobs& k) { return k.time_scale * (prefill ? base / k.prefill_matmul_scale : base); };
    ValidationRow r;
    r.kind = "serving";
    r.engine = i < 40 ? "e" : "other";
    r.publication = fmt::format("p{}", i % 6);
    r.metric = prefill ? "ttft_s" : "tpot_s";
    r.serving_prefill_fitted = r.engine == "e";
    r.serving_at = time_at;
    r.predicted = time_at({});
    r.published = r.engine == "e" ? time_at({1.1, 0, 0.7}) : time_at({1.1, 0, 1});
    rep.rows.push_back(r);
  }
  const CrossValidation cv = cross_validate(rep, 0.12);
  EXPECT_NEAR(cv.fitted.serving_prefill_matmul_scale_for("e"), 0.7, 0.04);
  EXPECT_NEAR(cv.fitted.serving_time_scale_for("e"), 1.1, 0.06);
  EXPECT_EQ(cv.fitted.serving_prefill_matmul_scale_for("other"), 1);
  EXPECT_LT(cv.cross_validated.at("serving").mape, 0.07);
}

// Serving rows of one engine's pre-XQA build, on grouped-query models, whose repeated cache reads
// reach DRAM at a share of 0.4 where the kernel as written would read them all: the fit finds that
// share within its 5% step; rows of other engines keep 1.
TEST(LeaveOnePublicationOut, ServingFitFindsTheDramShareOfPerQueryHeadCacheReads) {
  ValidationReport rep;
  for (int i = 0; i < 60; ++i) {
    const double weights = 0.01, cache = 0.002 * (1 + i % 5), extra = 7 * cache;
    auto time_at = [weights, cache, extra](const ServingKnobs& k) {
      return k.time_scale * (weights + cache + k.per_query_head_kv_share * extra);
    };
    ValidationRow r;
    r.kind = "serving";
    r.engine = i < 40 ? "e" : "other";
    r.publication = fmt::format("p{}", i % 6);
    r.metric = "tpot_s";
    r.serving_per_query_head = r.engine == "e";
    r.serving_at = time_at;
    r.predicted = time_at({});
    r.published = r.engine == "e" ? time_at({1, 0, 1, 0.4}) : time_at({});
    rep.rows.push_back(r);
  }
  const CrossValidation cv = cross_validate(rep, 0.12);
  EXPECT_NEAR(cv.fitted.serving_per_query_head_kv_share_for("e"), 0.4, 0.03);
  EXPECT_EQ(cv.fitted.serving_per_query_head_kv_share_for("other"), 1);
  EXPECT_LT(cv.cross_validated.at("serving").mape, 0.03);
}

// Rows whose stack overlaps TP: of the TP time its GEMMs could cover, the runs hide only half;
// the fit finds that share, and rows without overlap leave it alone.
TEST(LeaveOnePublicationOut, FitFindsTheShareOfTensorParallelTimeAnOverlapHides) {
  ValidationReport rep;
  for (int i = 0; i < 600; ++i) {
    const double c = 1 + i % 7, m = 0.5 + (i % 5) * 0.3, x = 0.2 + (i % 3) * 0.4, hideable = (i % 2) * 0.8 * x;
    ValidationRow r = throughput_row(fmt::format("p{}", i % 6), "s", c, m, x, c + m + x - 0.5 * hideable);
    r.fit.time.tp_hidden_s = hideable;
    rep.rows.push_back(r);
  }
  const CrossValidation cv = cross_validate(rep, 0.12);
  const TrainingFit& f = cv.fitted.for_stack("s");
  EXPECT_NEAR(f.tp_overlap_scale, 0.5, 0.08);  // the ridge pulls it toward 1 a little
  EXPECT_NEAR(f.compute_scale, 1.0, 0.03);
  EXPECT_NEAR(f.comm_scale, 1.0, 0.05);
}

// The same rows plus one in twenty that runs 4x slower than any scale explains (a run the model
// cannot express, such as ZeRO-3 at 1,536 GPUs): the least-absolute-error fit follows the many
// rows, where squares would raise every scale toward the few.
TEST(LeaveOnePublicationOut, FitIsNotDraggedByAFewInexpressibleRows) {
  ValidationReport rep;
  for (int i = 0; i < 600; ++i) {
    const double c = 1 + i % 7, m = 0.5 + (i % 5) * 0.3, x = 0.2 + (i % 3) * 0.4;
    const double t = 1.3 * c + 0.8 * m + x;
    rep.rows.push_back(throughput_row(fmt::format("p{}", i % 6), "s", c, m, x, i % 20 == 0 ? 4 * t : t));
  }
  const CrossValidation cv = cross_validate(rep, 0.12);
  const TrainingFit& f = cv.fitted.for_stack("s");
  EXPECT_NEAR(f.compute_scale, 1.3, 0.05);
  EXPECT_NEAR(f.memory_scale, 0.8, 0.08);
  EXPECT_NEAR(f.comm_scale, 1.0, 0.08);
}

// data/fitted.toml is what `gpuplan fit` writes from the table today: rerun it after changing the
// validation rows or the model.
TEST(FittedParameters, ShippedFileIsTheFitOfTheValidationTable) {
  auto shipped = FittedParameters::from_toml(data::embedded_file("fitted.toml"), "fitted.toml");
  ASSERT_TRUE(shipped) << shipped.error().to_string();
  const FittedParameters& fresh = builtin().cv.fitted;
  auto same = [](const TrainingFit& a, const TrainingFit& b, const std::string& where) {
    for (auto [x, y, name] : {std::tuple{a.compute_scale, b.compute_scale, "compute_scale"},
                              std::tuple{a.memory_scale, b.memory_scale, "memory_scale"},
                              std::tuple{a.comm_scale, b.comm_scale, "comm_scale"},
                              std::tuple{a.activation_scale, b.activation_scale, "activation_scale"},
                              std::tuple{a.allocator_fraction, b.allocator_fraction, "allocator_fraction"},
                              std::tuple{a.throughput_band.low, b.throughput_band.low, "throughput_band low"},
                              std::tuple{a.throughput_band.high, b.throughput_band.high, "throughput_band high"},
                              std::tuple{a.memory_band.low, b.memory_band.low, "memory_band low"},
                              std::tuple{a.memory_band.high, b.memory_band.high, "memory_band high"}})
      EXPECT_NEAR(x, y, 1e-4 * std::max(1.0, std::fabs(y))) << where << " " << name << ": run `gpuplan fit --out data/fitted.toml`";
  };
  same(shipped->global, fresh.global, "global");
  EXPECT_NEAR(shipped->serving_time_scale, fresh.serving_time_scale, 1e-4 * fresh.serving_time_scale);
  EXPECT_EQ(shipped->serving_engine_time_scale.size(), fresh.serving_engine_time_scale.size());
  for (const auto& [id, k] : fresh.serving_engine_time_scale)
    EXPECT_NEAR(shipped->serving_time_scale_for(id), k, 1e-4 * k) << "serving.engine." << id;
  EXPECT_EQ(shipped->serving_matvec_sm_Bps.size(), fresh.serving_matvec_sm_Bps.size());
  for (const auto& [id, r] : fresh.serving_matvec_sm_Bps)
    EXPECT_NEAR(shipped->serving_matvec_sm_Bps_for(id), r, 1e-4 * r) << "serving.quantized_matvec_gbps_per_sm." << id;
  EXPECT_EQ(shipped->serving_prefill_matmul_scale.size(), fresh.serving_prefill_matmul_scale.size());
  for (const auto& [id, x] : fresh.serving_prefill_matmul_scale)
    EXPECT_NEAR(shipped->serving_prefill_matmul_scale_for(id), x, 1e-4 * x) << "serving.prefill_matmul_scale." << id;
  EXPECT_EQ(shipped->serving_per_query_head_kv_share.size(), fresh.serving_per_query_head_kv_share.size());
  for (const auto& [id, x] : fresh.serving_per_query_head_kv_share)
    EXPECT_NEAR(shipped->serving_per_query_head_kv_share_for(id), x, 1e-4) << "serving.per_query_head_kv_share." << id;
  EXPECT_EQ(shipped->stacks.size(), fresh.stacks.size());
  for (const auto& [id, f] : fresh.stacks) same(shipped->for_stack(id), f, "stack." + id);
}

TEST(FittedParameters, RejectsOutOfRangeValuesAndUnknownKeys) {
  EXPECT_FALSE(FittedParameters::from_toml("[global]\ncompute_scale = -1\n", "t"));
  EXPECT_FALSE(FittedParameters::from_toml("[global]\ncompute_scal = 1\n", "t"));
  EXPECT_FALSE(FittedParameters::from_toml("[global]\nthroughput_band = [1.2, 0.8, 3]\n", "t"));
  EXPECT_FALSE(FittedParameters::from_toml("[serving.quantized_matvec_gbps_per_sm]\n\"llama.cpp\" = 0\n", "t"));
  EXPECT_FALSE(FittedParameters::from_toml("[serving.quantized_matvec_gbps_per_sm]\n\"llama.cpp\" = \"fast\"\n", "t"));
  auto matvec = FittedParameters::from_toml("[serving.quantized_matvec_gbps_per_sm]\n\"llama.cpp\" = 11\n", "t");
  ASSERT_TRUE(matvec);
  EXPECT_EQ(matvec->serving_matvec_sm_Bps_for("llama.cpp"), 11e9);
  EXPECT_EQ(matvec->serving_matvec_sm_Bps_for("vllm"), 0);
  EXPECT_FALSE(FittedParameters::from_toml("[serving.prefill_matmul_scale]\n\"llama.cpp\" = 0.01\n", "t"));
  auto prefill = FittedParameters::from_toml("[serving.prefill_matmul_scale]\n\"llama.cpp\" = 0.7\n", "t");
  ASSERT_TRUE(prefill);
  EXPECT_EQ(prefill->serving_prefill_matmul_scale_for("llama.cpp"), 0.7);
  EXPECT_EQ(prefill->serving_prefill_matmul_scale_for("vllm"), 1);
  EXPECT_FALSE(FittedParameters::from_toml("[serving.per_query_head_kv_share]\n\"tensorrt-llm\" = 1.5\n", "t"));
  auto share = FittedParameters::from_toml("[serving.per_query_head_kv_share]\n\"tensorrt-llm\" = 0.45\n", "t");
  ASSERT_TRUE(share);
  EXPECT_EQ(share->serving_per_query_head_kv_share_for("tensorrt-llm"), 0.45);
  EXPECT_EQ(share->serving_per_query_head_kv_share_for("vllm"), 1);
  auto ok = FittedParameters::from_toml("[global]\ncompute_scale = 1.5\n[stack.hf]\nmemory_scale = 2\n", "t");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->for_stack("hf").compute_scale, 1.5);  // inherited from the global section
  EXPECT_EQ(ok->for_stack("hf").memory_scale, 2);
  EXPECT_EQ(ok->for_stack("megatron").memory_scale, 1);
}

// The headline of `gpuplan validate`. Issue 9 targets 15% (training throughput) and 12% (training
// memory) leave one publication out; the table of 502 + 117 published rows reaches 13.2% and 8.6%
// today (the README says so and lists the worst stacks, DeepSpeed and Megatron-DeepSpeed).
// These bounds guard against regressions from there; lower them as the model improves.
TEST(CrossValidation, HeldOutPublicationsScoredWithinTodaysError) {
  const CrossValidation& cv = builtin().cv;
  for (const auto& [kind, s] : cv.cross_validated)
    std::printf("%s: leave-one-publication-out MAPE %.1f%% over %d rows from %d publications (in sample %.1f%%)\n",
                kind.c_str(), 100 * s.mape, s.rows, s.publications, 100 * cv.in_sample.at(kind).mape);
  for (const auto& [kind, stacks] : cv.cross_validated_by_stack)
    for (const auto& [stack, s] : stacks) std::printf("  %s %s: %.1f%% over %d rows\n", kind.c_str(), stack.c_str(), 100 * s.mape, s.rows);
  const Score& t = cv.cross_validated.at("train_throughput");
  const Score& m = cv.cross_validated.at("train_memory");
  EXPECT_GE(t.rows, 150);
  EXPECT_GE(t.publications, 15);
  EXPECT_GE(m.publications, 10);
  // 13.2% today (13.5% before session 28 gave Jean Zay's V100 rows the 50 GB/s NVLink their
  // publisher states): 58 rows of four publications gathered in session 22 (Qwen's short-sequence
  // runs and BigScience's V100 runs among them) raised it from 11.5%, and session 27's
  // Megatron-DeepSpeed rows (BigScience's tr1-13B on V100s, AuroraGPT-7B on Polaris) from 13.2%.
  EXPECT_LE(t.mape, 0.135);
  // 8.6% today, over 20 more rows from two publications gathered in session 23.
  EXPECT_LE(m.mape, 0.09);
  // The Hugging Face stack meets the per-stack target since eager hosts set a floor (14.0% today).
  EXPECT_LE(cv.cross_validated_by_stack.at("train_throughput").at("hf").mape, 0.15);
  // Out of sample is never better than in sample by more than noise.
  EXPECT_GE(t.mape, cv.in_sample.at("train_throughput").mape - 0.01);
}

// The held-out serving error split by how each run loaded its engine covers every serving row once,
// under the four loads the table holds (bursts, request rates, client concurrencies, single batches).
TEST(CrossValidation, ServingErrorSplitsByLoadOverEveryRow) {
  const CrossValidation& cv = builtin().cv;
  int rows = 0;
  for (const auto& [load, s] : cv.serving_by_load) {
    std::printf("  serving load %s: %.1f%% over %d rows\n", load.c_str(), 100 * s.mape, s.rows);
    EXPECT_TRUE(load == "burst" || load == "request_rate" || load == "concurrency" || load == "batch") << load;
    EXPECT_GT(s.rows, 0);
    rows += s.rows;
  }
  EXPECT_EQ(cv.serving_by_load.size(), 4u);
  EXPECT_EQ(rows, cv.cross_validated.at("serving").rows);
}

}  // namespace gpuplan
