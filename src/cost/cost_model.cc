#include "cost/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuplan {

RentalCost rent_cost(const CloudPrice& q, const PriceBook& book, const Usage& u) {
  RentalCost r;
  r.quote = q;
  r.max_gpus = book.max_gpus(q);
  r.over_capacity = r.max_gpus > 0 && u.gpus > r.max_gpus;
  const double gpus = static_cast<double>(u.gpus);
  switch (q.mode) {
    case RentalMode::on_demand: r.billed_gpu_hours = u.busy_gpu_hours(); break;
    case RentalMode::capacity_block: {
      // Each run reserves whole days, at least the block's minimum.
      const double days = std::max(q.min_days, std::ceil(u.hours_per_run / 24.0 - 1e-9));
      r.billed_gpu_hours = gpus * u.runs * days * 24.0;
      break;
    }
    case RentalMode::reserved_1y:
    case RentalMode::reserved_3y: {
      // A commitment bills every hour of every term needed to cover the span of use.
      const double term = commitment_months(q.mode);
      const double terms = std::max(1.0, std::ceil(u.span_months / term - 1e-9));
      r.billed_gpu_hours = gpus * terms * term * kHoursPerMonth;
      break;
    }
    case RentalMode::spot: {
      // An interruption of any node stops the job; it restarts from its last checkpoint.
      const ProviderClass* c = book.provider_class(q.provider_class);
      const double nodes = std::ceil(gpus / 8.0);
      const double per_run = c ? nodes * c->spot_interruptions_per_month * u.hours_per_run / kHoursPerMonth : 0;
      r.expected_interruptions = per_run * u.runs;
      r.lost_gpu_hours = r.expected_interruptions * (c ? c->spot_restart_hours : 0) * gpus;
      r.billed_gpu_hours = u.busy_gpu_hours() + r.lost_gpu_hours;
      break;
    }
  }
  r.total_usd = r.billed_gpu_hours * q.usd_per_gpu_hour;
  return r;
}

Result<Housing> house(const Gpu& gpu, int64_t gpus_needed, const Platform& platform) {
  const std::vector<const NodeClass*> nodes = platform.nodes_for(gpu);
  if (nodes.empty())
    return make_error(gpu.id, fmt::format("no node class in platform.toml houses a {} ({})", gpu.form_factor, to_string(gpu.tier)));
  for (const NodeClass* n : nodes) {
    Housing h;
    h.node = n;
    h.gpus = (gpus_needed + n->purchase_unit_gpus - 1) / n->purchase_unit_gpus * n->purchase_unit_gpus;
    h.nodes = (h.gpus + n->gpus_per_node - 1) / n->gpus_per_node;
    h.office = n->id == "workstation";
    const double per_node = static_cast<double>(std::min(h.gpus, n->gpus_per_node));
    // The cards at full power and the host (CPUs, memory, fans, drives).
    h.box_watts = per_node * gpu.tdp_w + n->host_watts;
    // An office holds a few boxes; beyond that the cards go to a server room or colocation site,
    // in the next node class that can house them (or the same boxes in a rack).
    if (h.office && h.nodes > platform.office().max_boxes) {
      if (n != nodes.back()) continue;
      h.office = false;
    }
    return h;
  }
  return make_error(gpu.id, "no housing");
}

Result<OwnershipTco> own_cost(const Gpu& gpu, const PurchasePrice& price, const Housing& h, const PriceBook& book,
                              double busy_gpu_hours_per_month, const OwnershipCosts& own) {
  OwnershipTco t;
  t.housing = h;
  t.price = price;
  const ServerPrice* server = book.server(h.node->id);
  if (!server) return make_error(gpu.id, fmt::format("no [[server]] price for node class '{}'", h.node->id));
  const auto fabric = book.fabric(h.nodes);
  const double cards = static_cast<double>(h.gpus), nodes = static_cast<double>(h.nodes);
  t.cards_usd = cards * price.usd;
  t.servers_usd = nodes * server->usd;
  t.network_usd = h.nodes > 1 ? nodes * (server->network_usd_per_node + (h.office ? 0 : fabric ? fabric->usd_per_node : 0)) : 0;
  t.capex_usd = t.cards_usd + t.servers_usd + t.network_usd;
  t.server_source = server->source;
  t.fabric_source = h.nodes > 1 && fabric ? fabric->source : "";
  t.months = 12 * own.lifetime_years;
  t.busy_gpu_hours_per_month = std::min(busy_gpu_hours_per_month, cards * kHoursPerMonth);
  // Power: every card busy for its share of the hours, idle the rest; the host in proportion.
  const double busy_per_card = t.busy_gpu_hours_per_month / cards;
  const double kwh_per_card = gpu.tdp_w / 1000.0 * (1 + own.host_power_fraction) *
                              (own.busy_power_fraction * busy_per_card + own.idle_power_fraction * (kHoursPerMonth - busy_per_card));
  t.power_usd_per_month = cards * kwh_per_card * own.electricity_usd_per_kwh * (h.office ? own.office_pue : own.pue);
  t.it_kw = cards * gpu.tdp_w / 1000.0 * (1 + own.host_power_fraction);
  t.colocation_usd_per_month = h.office ? 0 : t.it_kw * own.colocation_usd_per_kw_month;
  t.support_usd_per_month = t.capex_usd * own.support_fraction_per_year / 12;
  t.staff_usd_per_month = nodes * (h.office ? own.staff_hours_per_box_month : own.staff_hours_per_node_month) * own.staff_usd_per_hour;
  const ResaleRule* resale = book.resale(gpu.tier);
  const double retention = resale ? std::pow(resale->retention_per_year, own.lifetime_years) : 0;
  t.resale_usd = (t.cards_usd + t.servers_usd) * retention;
  t.resale_source = resale ? resale->source : "no resale rule: nothing recovered";
  t.total_usd = t.capex_usd + t.opex_usd_per_month() * t.months - t.resale_usd;
  return t;
}

CostReport cost_options(const Gpu& gpu, const GpuPrice* price, const PriceBook& book, const Platform& platform,
                        const CostInputs& in) {
  CostReport r;
  const double months = 12 * in.own.lifetime_years;
  Usage u;
  u.gpus = in.gpus;
  u.runs = months;
  u.hours_per_run = in.hours_per_month;
  u.span_months = months;
  if (price) {
    // The cheapest quote of each mode in each provider class.
    for (const auto& pc : book.provider_classes())
      for (RentalMode m : {RentalMode::on_demand, RentalMode::capacity_block, RentalMode::reserved_1y,
                           RentalMode::reserved_3y, RentalMode::spot}) {
        auto q = price->cheapest(m, pc.id);
        if (!q) continue;
        CostOption o;
        o.mode = to_string(m);
        o.provider = q->provider;
        o.provider_class = q->provider_class;
        o.rental = rent_cost(*q, book, u);
        o.total_usd = o.rental->total_usd;
        o.usd_per_month = o.total_usd / months;
        r.options.push_back(o);
      }
    for (const auto& p : price->purchase) {
      auto h = house(gpu, in.gpus, platform);
      if (!h) continue;
      auto t = own_cost(gpu, p, *h, book, static_cast<double>(in.gpus) * in.hours_per_month, in.own);
      if (!t) continue;
      CostOption o;
      o.mode = "buy";
      o.condition = p.condition;
      o.tco = *t;
      o.total_usd = t->total_usd;
      o.usd_per_month = t->total_usd / months;
      r.options.push_back(o);
    }
  }
  std::stable_sort(r.options.begin(), r.options.end(), [](const CostOption& a, const CostOption& b) { return a.total_usd < b.total_usd; });
  if (!r.options.empty()) r.cheaper = r.options.front().mode;
  // Break-even against the cheapest on-demand quote, for the purchase a buyer would make today.
  const auto od = price ? price->cheapest(RentalMode::on_demand) : std::nullopt;
  const PurchasePrice* pp = price ? price->purchase_price() : nullptr;
  if (od && pp) {
    auto h = house(gpu, in.gpus, platform);
    if (h) {
      auto at = [&](double hours) { return own_cost(gpu, *pp, *h, book, static_cast<double>(in.gpus) * hours, in.own); };
      auto now = at(in.hours_per_month);
      auto idle = at(0);
      auto full = at(kHoursPerMonth);
      if (now && idle && full) {
        const double n = static_cast<double>(in.gpus);
        const double rent_per_month = n * od->usd_per_gpu_hour * in.hours_per_month;
        const double saving = rent_per_month - now->opex_usd_per_month();
        if (saving > 0) r.break_even_months = now->capex_usd / saving;
        // Owning is linear in busy hours: opex(h) = idle + slope x h. Renting h hours a month costs
        // what owning does over the horizon when n x rate x h x M = capex - resale + M x opex(h).
        const double slope = (full->opex_usd_per_month() - idle->opex_usd_per_month()) / kHoursPerMonth;
        const double gap = n * od->usd_per_gpu_hour - slope;
        if (gap > 0) {
          const double h_star = (idle->capex_usd - idle->resale_usd + months * idle->opex_usd_per_month()) / (months * gap);
          if (h_star <= kHoursPerMonth) r.break_even_utilisation = h_star / kHoursPerMonth;
        }
      }
    }
  }
  return r;
}

}  // namespace gpuplan
