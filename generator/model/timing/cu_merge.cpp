// CuMerge: rtl_templates/sg_cu.sv func merge, an EagerMerge(b 0) of two inputs on a compute
// unit. The order of the tiles comes from the functional streams (the fixed point runModel
// finds, model/model.cpp); this unit times it: out tile k is the input tile from[k], taken
// once the previous out tile's last beat was taken and the output register is free: in
// the cycle its last beat moves on into the next FIFO (one cycle before that FIFO shows it),
// so one-beat tiles pass one per cycle.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

bool CuMerge::step(TimingModel& m) {
  Link& o = m.links[size_t(out)];
  Link* l[2] = {&m.links[size_t(in[0].first)], &m.links[size_t(in[1].first)]};
  const size_t c[2] = {size_t(in[0].second), size_t(in[1].second)};
  bool progress = false;
  // A STOP at the head of an input is dropped the cycle it arrives.
  auto dropStops = [&](int p) {
    for (; nextIn[p] < l[p]->size() && l[p]->kinds[nextIn[p]] == Kind::Stop; ++nextIn[p], progress = true)
      l[p]->accept[c[p]][nextIn[p]] = 1;
  };
  dropStops(0), dropStops(1);
  while (nextOut < from.size()) {
    const size_t k = nextOut;
    int64_t t = 1;
    if (k > 0) {
      const auto [pp, pi] = from[k - 1];
      const int64_t prevIn = inEnd(m, pp, pi), room = o.end[k - 1];
      if (prevIn == kUnknown || room == kUnknown) break;
      t = std::max(prevIn, room - 1 - kOutHop);
    }
    const auto [p, i] = from[k];
    if (o.kinds[k] == Kind::Done) {  // both DONEs, taken together once both are at the heads
      const size_t i1 = l[1]->size() - 1;
      if (l[0]->start[i] == kUnknown || l[1]->start[i1] == kUnknown) break;
      t = std::max({t, l[0]->start[i], l[1]->start[i1]});
      l[0]->accept[c[0]][i] = l[1]->accept[c[1]][i1] = t;
      ++nextIn[0], ++nextIn[1];
    } else {
      l[p]->accept[c[p]][i] = t;
      ++nextIn[p];
      dropStops(p);
    }
    ++nextOut, progress = true;
  }
  for (; nextOffer < nextOut && inStart(m, from[nextOffer].first, from[nextOffer].second) != kUnknown;
       ++nextOffer, progress = true)
    o.offer[nextOffer] = inStart(m, from[nextOffer].first, from[nextOffer].second) + kHop + kOutHop;
  for (; nextHold < o.nextEnd; ++nextHold, progress = true) {
    const auto [p, i] = from[nextHold];
    l[p]->hold[c[p]][i] = o.end[nextHold] - 1 - kOutHop;
    if (o.kinds[nextHold] == Kind::Done) l[1]->hold[c[1]][l[1]->size() - 1] = o.end[nextHold] - 1 - kOutHop;
  }
  // Dropped STOPs are held for their one beat.
  for (int p = 0; p < 2; ++p)
    for (; nextStopHold[p] < l[p]->size() && l[p]->cstart[c[p]][nextStopHold[p]] != kUnknown; ++nextStopHold[p]) {
      const size_t i = nextStopHold[p];
      if (l[p]->kinds[i] == Kind::Stop) l[p]->hold[c[p]][i] = l[p]->cstart[c[p]][i] + 1, progress = true;
      else if (l[p]->hold[c[p]][i] == kUnknown) break;
    }
  return progress;
}

int64_t CuMerge::beatVisible(const TimingModel& m, size_t k, int64_t b) const {
  const auto [p, i] = from[k];
  const size_t li = size_t(in[size_t(p)].first);
  return m.links[li].start[i] == kUnknown ? kUnknown : m.beatAt(li, i, b) + kHop + kOutHop;
}

int64_t CuMerge::endFor(TimingModel& m, size_t k, int64_t start) {
  const auto [p, i] = from[k];
  return afterInput(start + m.links[size_t(out)].beats[k], m.links[size_t(in[size_t(p)].first)].natEnd[i]);
}

std::vector<int> CuMerge::arrivalOrder(const TimingModel& m, bool partial) const {
  const Link& o = m.links[size_t(out)];
  const Link* l[2] = {&m.links[size_t(in[0].first)], &m.links[size_t(in[1].first)]};
  size_t next[2] = {0, 0};
  auto skip = [&](int p) {
    while (next[p] < l[p]->size() && l[p]->kinds[next[p]] == Kind::Stop) ++next[p];
  };
  std::vector<int> order;
  for (size_t k = 0; k < from.size() && o.kinds[k] != Kind::Done; ++k) {
    skip(0), skip(1);
    // The unit is free for tile k once tile k-1 was taken whole and the output has room.
    int64_t t = 1;
    if (k > 0) {
      const int64_t prevIn = inEnd(m, from[k - 1].first, from[k - 1].second), room = o.end[k - 1];
      if (partial && (prevIn == kUnknown || room == kUnknown)) break;
      t = std::max(prevIn, room - 1 - kOutHop);
    }
    int64_t a[2];
    for (int p = 0; p < 2; ++p) {
      a[p] = next[p] < l[p]->size() && l[p]->kinds[next[p]] == Kind::Data ? l[p]->start[next[p]] : INT64_MAX;
      if (partial && a[p] == kUnknown) a[p] = l[p]->offer[next[p]] == kUnknown ? INT64_MAX : l[p]->offer[next[p]];
    }
    if (partial && a[0] == INT64_MAX && a[1] == INT64_MAX) break;
    const int64_t go = std::max(t, std::min(a[0], a[1]));
    const int p = a[0] <= go ? 0 : 1;
    order.push_back(p);
    ++next[p];
  }
  return order;
}

bool CuMerge::contradicts(const std::vector<int>& decided) const {
  for (size_t k = 0; k < decided.size() && k < from.size(); ++k)
    if (decided[k] != from[k].first) return true;
  return false;
}

}  // namespace stepgen::timing
