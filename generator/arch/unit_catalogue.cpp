#include "arch/unit_catalogue.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

namespace stepgen {

int muCyclesPerBeat(const ArchModel& a) { return (a.linkBytes() + a.mu.bytesPerCycle - 1) / a.mu.bytesPerCycle; }

UnitCatalogue::UnitCatalogue(const ArchModel& a)
    : a_(a), crossbar_(a.link.topology == "crossbar"), reach_(a.link.reach) {
  for (const UnitSite& s : a.units) xs_.push_back(s.x), ys_.push_back(s.y);
  for (int u = 0; u < size(); ++u)
    if (a.units[size_t(u)].kind != UnitKind::Empty) units_.push_back({u});
}

const std::vector<UnitId>& UnitCatalogue::candidates(UnitId dst) const {
  if (cands_.empty()) cands_.resize(a_.units.size()), candsBuilt_.assign(a_.units.size(), false);
  const size_t d = size_t(dst.v);
  if (!candsBuilt_.at(d)) {
    for (UnitId src : units_)
      if (src != dst && reaches(src, dst)) cands_[d].push_back(src);
    candsBuilt_[d] = true;
  }
  return cands_[d];
}

std::vector<UnitId> UnitCatalogue::unitsOfKind(UnitKind k) const {
  std::vector<UnitId> r;
  for (UnitId u : units_)
    if (kind(u) == k) r.push_back(u);
  return r;
}

int UnitCatalogue::kindIndex(UnitId u) const {
  int n = 0;
  for (UnitId v : units_)
    if (v < u) n += kind(v) == kind(u);
  return n;
}

std::string UnitCatalogue::instanceName(UnitId u) const {
  const UnitSite& s = a_.units.at(size_t(u.v));
  const char* k = s.kind == UnitKind::Compute ? "cu" : s.kind == UnitKind::Memory ? "mu" : s.kind == UnitKind::AddressGen ? "ag" : "none";
  return fmt::format("u_{}_x{}_y{}", k, s.x, s.y);
}

const char* UnitCatalogue::moduleName(UnitKind k) {
  return k == UnitKind::Compute ? "sg_cu" : k == UnitKind::Memory ? "sg_mu" : "sg_ag";
}

std::vector<TemplateParam> UnitCatalogue::templateParams(UnitId u) const {
  auto i = [](int64_t v) { return std::to_string(v); };
  switch (kind(u)) {
    case UnitKind::Compute:
      return {{"W", "W"},
              {"LANES", i(a_.cu.lanes)},
              {"BUF_WORDS", i(a_.cu.bufferBytes / 4)},
              {"BF16", i(a_.cu.format == NumberFormat::Bf16Fp32)},
              {"DYN", i(a_.cu.dynamicTiles())},
              {"ATTN", i(a_.cu.hasAttn())},
              {"SILU", i(a_.cu.hasSilu())},
              {"MUL", i(a_.cu.hasWordMul())},
              {"BANKED", i(a_.cu.banked)},
              {"A_COPIES", i(a_.cu.aCopies)},
              {"NEAR_FAR", i(a_.cu.nearFar)},
              {"TOPK", i(a_.cu.hasTopk())}};
    case UnitKind::Memory:
      return {{"W", "W"}, {"WORDS", i(a_.mu.capacityBytes / 4)}, {"CPB", i(muCyclesPerBeat(a_))}, {"ROUTE", i(a_.mu.route)}};
    default:
      return {{"W", "W"}, {"P", "P"}, {"AB", "AB"}, {"OUTSTANDING", i(a_.offchip.outstanding)}};
  }
}

std::vector<TemplateParam> UnitCatalogue::topParams() const {
  return {{"W", std::to_string(a_.wordsPerBeat())},
          {"P", std::to_string(a_.linkBytes() / 64)},
          {"AB", std::to_string(a_.offchip.addressBits)}};
}

std::vector<TemplateParam> UnitCatalogue::resolvedParams(UnitId u) const {
  std::vector<TemplateParam> ps = templateParams(u);
  for (TemplateParam& p : ps)
    for (const TemplateParam& t : topParams())
      if (p.value == t.name) p.value = t.value;
  return ps;
}

int UnitCatalogue::inPorts(UnitKind k) { return k == UnitKind::Empty ? 0 : 2; }

std::string UnitCatalogue::portName(UnitId u, int p) const { return fmt::format("{}.in{}", instanceName(u), p); }

std::vector<std::string> UnitCatalogue::fabricPortNames() const {
  std::vector<std::string> names;
  for (UnitId u : units_)
    for (int p = 0; p < inPorts(kind(u)); ++p) names.push_back(portName(u, p));
  return names;
}

int UnitCatalogue::sourceSelect(UnitId dst, UnitId src) const {
  // Candidates are in grid (id) order: a binary search. On a crossbar they are every unit
  // but dst, so the position follows from src's among all units without building the list.
  if (src == dst) return 0;
  if (crossbar_) {
    auto it = std::lower_bound(units_.begin(), units_.end(), src);
    if (it == units_.end() || *it != src) return 0;
    const int before = int(it - units_.begin());
    return before - (std::binary_search(units_.begin(), units_.end(), dst) && dst < src ? 1 : 0) + 1;
  }
  const auto& c = candidates(dst);
  auto it = std::lower_bound(c.begin(), c.end(), src);
  return it == c.end() || *it != src ? 0 : int(it - c.begin()) + 1;
}

int UnitCatalogue::sourceSelectBits() const {
  size_t most = 0;
  if (crossbar_) {
    most = units_.empty() ? 0 : units_.size() - 1;  // every other unit
  } else {
    for (UnitId d : units_) most = std::max(most, candidates(d).size());
  }
  int b = 0;
  while ((size_t(1) << b) < most + 1) ++b;
  return std::max(b, 1);
}

}  // namespace stepgen
