// The caveats of a feasible candidate: how close its plans come to the cards' memory, where its
// prices come from, and what renting or buying that way entails (interruptions, commitments,
// boards, circuits, licences, links). Every number is a fact of the candidate's JSON entry.
#include <fmt/format.h>

#include "advise/advisor.h"
#include "advise/candidate_facts.h"

namespace gpuplan {

namespace {

void memory_caveats(Candidate& c, const Headroom& headroom) {
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    const PlanCandidate& p = c.jobs[j].plan;
    const std::string at = fmt::format("jobs/{}/plan/", j);
    c.caveats.push_back(sentence("{}: {} of the {} on each card in use, {} free; every plan keeps at least {} free ({}).",
                                 {fact::text(fmt::format("jobs/{}/name", j), c.jobs[j].name),
                                  fact::bytes(at + "memory_per_gpu_bytes", p.memory_per_gpu_bytes),
                                  fact::bytes(at + "capacity_bytes", p.capacity_bytes), fact::percent(at + "free_fraction", p.margin.free_fraction),
                                  fact::percent(at + "required_headroom_fraction", p.margin.required_fraction),
                                  note(c, "headroom_basis", headroom.basis)}));
    if (p.workload.offload_optimizer)
      c.caveats.push_back(sentence("{} keeps its optimizer states in CPU memory: {} of host memory in each node, and each step waits for the host's update.",
                                   {fact::text(fmt::format("jobs/{}/name", j), c.jobs[j].name),
                                    fact::bytes(at + "host_bytes_per_node", p.host_bytes_per_node)}));
  }
}

void service_caveats(Candidate& c, const Headroom& headroom) {
  for (size_t s = 0; s < c.services.size(); ++s)
    c.caveats.push_back(sentence("{}: replicas are sized on each card less the {} margin every plan keeps ({}).",
                                 {fact::text(fmt::format("services/{}/name", s), c.services[s].name),
                                  fact::percent("/headroom/fraction", headroom.fraction), note(c, "headroom_basis", headroom.basis)}));
}

void rental_caveats(Candidate& c, const Gpu& gpu, const PriceBook& book) {
  c.caveats.push_back(sentence("Rate: {} per GPU-hour from {} ({}; {}).",
                               {fact::usd("usd_per_gpu_hour", c.usd_per_gpu_hour), fact::text("provider", c.provider),
                                fact::text("price_basis", c.price_basis), fact::text("price_date", c.price_date)}));
  const ProviderClass* pc = book.provider_class(c.provider_class);
  if (c.mode == "spot" && pc)
    c.caveats.push_back(sentence("Spot: the provider can take the GPUs back ({}); about {} interruptions over all runs are expected ({}), "
                                 "redoing {} GPU-hours of work, which the time and cost include. Checkpoint often.",
                                 {note(c, "spot_notice", pc->spot_notice), num(c, "spot_interruptions", Fact::Kind::number, c.facts["spot_interruptions"]),
                                  note(c, "spot_source", pc->spot_source), num(c, "spot_lost_gpu_hours", Fact::Kind::number, c.facts["spot_lost_gpu_hours"])}));
  if (c.mode == "reserved-1y" || c.mode == "reserved-3y")
    c.caveats.push_back(sentence("A reservation bills {} GPUs for {} months whether they are busy or not.",
                                 {fact::count("gpus", static_cast<double>(c.gpus)), num(c, "committed_months", Fact::Kind::count, c.facts["committed_months"])}));
  // The largest self-service reservation any quote publishes; beyond it, clusters are contracts.
  int64_t largest = 0;
  for (const auto& p : book.prices())
    for (const auto& q : p.cloud)
      if (q.max_gpus && *q.max_gpus > largest) largest = *q.max_gpus;
  if (largest > 0 && c.gpus > largest)
    c.caveats.push_back(sentence("{} GPUs in one cluster is beyond the largest self-service reservation on file ({} GPUs): few providers "
                                 "can supply it, by negotiated contract, and the rate on file is a list price to negotiate from.",
                                 {fact::count("gpus", static_cast<double>(c.gpus)), num(c, "largest_self_service_gpus", Fact::Kind::count, static_cast<double>(largest))}));
  if (c.mode == "capacity-block")
    c.caveats.push_back(sentence("A capacity block is booked ahead for whole days and paid up front; the cost counts whole days per run.", {}));
  if (c.provider_class == "marketplace")
    c.caveats.push_back(sentence("Marketplace hosts are third parties of varying reliability and security; keep data that must stay private off them.", {}));
  if (gpu.tier == Tier::consumer)
    c.caveats.push_back(sentence("GeForce cards are rented from community and marketplace hosts: NVIDIA's GeForce licence forbids "
                                 "datacenter deployment, so hyperscalers do not offer them.", {}));
}

void purchase_caveats(Candidate& c, const AdviseRequest& req, const Gpu& gpu, const Platform& platform) {
  const OwnershipTco& t = *c.tco;
  c.caveats.push_back(sentence("Card price: {} each, {} ({}; {}).",
                               {num(c, "card_usd", Fact::Kind::usd, t.price.usd), fact::text("condition", c.condition),
                                fact::text("price_basis", c.price_basis), fact::text("price_date", c.price_date)}));
  if (!t.housing.node->needs.empty())
    c.caveats.push_back(sentence("{}: {} cards in {} node(s).", {note(c, "housing_needs", t.housing.node->needs),
                                                                 fact::count("gpus", static_cast<double>(c.gpus)),
                                                                 fact::count("tco/nodes", static_cast<double>(t.housing.nodes))}));
  if (t.housing.office && t.housing.box_watts > platform.office().circuit_w)
    c.caveats.push_back(sentence("Each box draws up to {} W, more than an office circuit carries ({} W, {}): it needs a dedicated higher-current circuit.",
                                 {num(c, "box_watts", Fact::Kind::count, t.housing.box_watts),
                                  num(c, "circuit_watts", Fact::Kind::count, platform.office().circuit_w), note(c, "circuit_source", platform.office().circuit_source)}));
  c.caveats.push_back(sentence("Owning over {} years: {} up front, {} a month to run (power, {}, support, staff), and about {} back at resale ({}).",
                               {fact::number("/horizon_years", req.constraints.own.lifetime_years), fact::usd("capex_usd", c.capex_usd),
                                num(c, "opex_usd_per_month", Fact::Kind::usd, t.opex_usd_per_month()),
                                note(c, "facility", t.housing.office ? "office power" : "colocation"), fact::usd("tco/resale_usd", t.resale_usd),
                                note(c, "resale_source", t.resale_source)}));
  if (c.condition == "used")
    c.caveats.push_back(sentence("Used cards come without the vendor's warranty and with unknown wear.", {}));
  (void)gpu;
}

void link_caveats(Candidate& c, const Gpu& gpu, const Platform& platform) {
  for (size_t s = 0; s < c.services.size(); ++s) {
    const int64_t tp = c.services[s].option.tp;
    if (tp > 1 && !platform.direct_link_for_tp(gpu, tp, default_cluster(gpu).gpus_per_node))
      c.caveats.push_back(sentence("{} splits the model over {} cards that have neither NVLink nor peer-to-peer: every layer's traffic "
                                   "crosses host memory, so latency suffers.",
                                   {fact::text(fmt::format("services/{}/name", s), c.services[s].name),
                                    fact::count(fmt::format("services/{}/tp", s), static_cast<double>(tp))}));
  }
}

}  // namespace

void add_caveats(Candidate& c, const AdviseRequest& req, const Gpu& gpu, const PriceBook& book, const Platform& platform,
                 const Headroom& headroom) {
  memory_caveats(c, headroom);
  service_caveats(c, headroom);
  if (c.mode == "buy") purchase_caveats(c, req, gpu, platform);
  else rental_caveats(c, gpu, book);
  link_caveats(c, gpu, platform);
}

}  // namespace gpuplan
