// CuMatmul: rtl_templates/sg_cu.sv func matmul (static, dyn_m and bt): operands into a free
// bank, passes * K cycles in the MAC array, the output bank drains a beat per cycle.
// docs/hardware.md section 2 ("CU matmul").
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

bool CuMatmul::step(TimingModel& m) {
  Link& a = m.links[size_t(in[0].first)];
  Link& b = m.links[size_t(in[1].first)];
  Link& o = m.links[size_t(out)];
  bool progress = false;
  // One bank loads at a time: tile i goes into bank i%2 once tile i-2 has been computed
  // and both operands of tile i-1 are in (sg_cu.sv ld_sel moves on a complete pair).
  while (nextAccept < a.size()) {
    const size_t i = nextAccept;
    int64_t t = 1;
    if (i >= 2) {
      if (computeEnd[i - 2] == kUnknown) break;
      t = computeEnd[i - 2];
    }
    if (i >= 1) {
      const int64_t ae = inEnd(m, 0, i - 1), be = inEnd(m, 1, i - 1);
      if (ae == kUnknown || be == kUnknown) break;
      t = std::max({t, ae, be});
    }
    a.accept[size_t(in[0].second)][i] = t, b.accept[size_t(in[1].second)][i] = t;
    ++nextAccept, progress = true;
  }
  while (nextCompute < a.size()) {
    const size_t i = nextCompute;
    const int64_t ae = inEnd(m, 0, i), be = inEnd(m, 1, i);
    if (ae == kUnknown || be == kUnknown) break;
    const bool data = a.kinds[i] == Kind::Data;
    // The start-up cost is paid after the operands arrive; a tile whose operands wait in
    // the other bank starts the cycle the previous one ends (sg_cu.sv: steady state C).
    int64_t t = std::max(ae, be) + 1 + (data ? kMatmulOverhead : 0);
    if (i > 0) t = std::max(t, computeEnd[i - 1]);
    if (i >= 2) {
      if (o.end[i - 2] == kUnknown) break;  // output bank i%2 still draining
      t = std::max(t, o.end[i - 2]);
    }
    computeEnd[i] = t + (data ? computeCycles[i] : 1);
    ++nextCompute, progress = true;
  }
  for (; nextOffer < nextCompute; ++nextOffer, progress = true)
    o.offer[nextOffer] = computeEnd[nextOffer] + kHop + (a.kinds[nextOffer] == Kind::Data ? kMacAddStage : 0);
  return progress;
}

int64_t CuMatmul::endFor(TimingModel& m, size_t i, int64_t start) { return start + m.links[size_t(out)].beats[i]; }

}  // namespace stepgen::timing
