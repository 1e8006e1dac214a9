#include "report/html_report.h"

#include <gtest/gtest.h>

#include "hardware/catalog.h"
#include "memory/fit.h"
#include "model/presets.h"
#include "report/svg_labels.h"
#include "util/units.h"

namespace gpuplan {

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(HtmlReport, IsSelfContainedWithThreeCharts) {
  auto req = parse_workload_file("name='t & <x>'\n[[training]]\nname='ft'\nmodel='llama-3.1-8b'\ntask='qlora'\ntokens=1e7\n"
                                 "[constraints]\ngpus=['rtx-4090','h100-sxm']\n", "w.toml", 20790, OwnershipCosts{});
  ASSERT_TRUE(req.ok()) << req.error().to_string();
  const Advice a = advise(*req, Catalog::builtin(), PriceBook::builtin(), EfficiencyTable::builtin(), Platform::builtin(),
                          AdviseOptions{Headroom{0.1, "test"}});
  ASSERT_TRUE(a.recommendation);
  const Gpu g = *Catalog::builtin().find(a.recommendation->gpu);
  const Efficiency eff = EfficiencyTable::builtin().for_gpu(g);
  const Workload& w = a.recommendation->jobs.front().plan.workload;
  const MemoryEstimate mem = estimate_memory(req->training[0].model, w, eff);
  const RooflineReport roof = roofline(req->training[0].model, w, g, eff, Phase::train);
  ReportFigures fig;
  fig.memory = &mem, fig.memory_title = "ft", fig.roofline = &roof, fig.roofline_title = "roof";
  fig.capacity_bytes = usable_memory_bytes(g);
  const std::string html = render_html(*req, a, fig);
  EXPECT_EQ(count(html, "<svg"), 3u);
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(count(html, "http://") + count(html, "https://"), 0u);  // nothing fetched
  EXPECT_NE(html.find("t &amp; &lt;x&gt;"), std::string::npos);      // names are escaped
  EXPECT_NE(html.find("Recommendation"), std::string::npos);
}

TEST(SvgLabels, TicksStepByOneTwoOrFiveTimesAPowerOfTen) {
  auto expect_ticks = [](const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9 * (1 + want.back()));
  };
  expect_ticks(nice_ticks(0, 10, 5), {0, 2, 4, 6, 8, 10});
  expect_ticks(nice_ticks(0, 0.9, 4), {0, 0.2, 0.4, 0.6, 0.8});
  expect_ticks(nice_ticks(0, 600e6, 5), {0, 100e6, 200e6, 300e6, 400e6, 500e6, 600e6});
}

TEST(SvgLabels, ALabelNeverCoversAnotherAndIsDroppedWhenNoSpotIsFree) {
  LabelPlacer p;
  const Box plot{0, 0, 800, 400};
  auto a = p.place(100, 100, "8 x h100-sxm buy", 10, plot);
  auto b = p.place(100, 100, "8 x h100-sxm on-demand", 10, plot);
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(text_box(a->first, a->second, "8 x h100-sxm buy", 10).overlaps(text_box(b->first, b->second, "8 x h100-sxm on-demand", 10)));
  LabelPlacer full;
  full.reserve(plot);
  EXPECT_FALSE(full.place(100, 100, "no room", 10, plot));
  const auto edge = p.place(795, 300, "edge label", 10, plot);  // no room on the right: goes left
  ASSERT_TRUE(edge);
  EXPECT_LT(edge->first, 795);
}

TEST(Units, ChartDollarsKeepThreeDigits) {
  EXPECT_EQ(format_usd_short(603945376), "$604M");
  EXPECT_EQ(format_usd_short(1250), "$1.25k");
  EXPECT_EQ(format_usd_short(950), "$950");
  EXPECT_EQ(format_usd_short(0.42), "$0.42");
  EXPECT_EQ(format_usd_short(35e9), "$35B");
}

}  // namespace gpuplan
