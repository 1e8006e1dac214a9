#include "report/html_report.h"

#include <gtest/gtest.h>

#include "hardware/catalog.h"
#include "memory/fit.h"
#include "model/presets.h"

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
  ReportFigures fig{&mem, "ft", &roof, "roof", usable_memory_bytes(g)};
  const std::string html = render_html(*req, a, fig);
  EXPECT_EQ(count(html, "<svg"), 3u);
  EXPECT_EQ(count(html, "<script"), 0u);
  EXPECT_EQ(count(html, "http://") + count(html, "https://"), 0u);  // nothing fetched
  EXPECT_NE(html.find("t &amp; &lt;x&gt;"), std::string::npos);      // names are escaped
  EXPECT_NE(html.find("Recommendation"), std::string::npos);
}

}  // namespace gpuplan
