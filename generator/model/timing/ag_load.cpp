// AgLoad and AgRandomLoad: rtl_templates/sg_ag.sv load modes (linear walk; random
// per_group walk of expert weight tiles). docs/hardware.md sections 2 and 7.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

int64_t AgLoad::requestCycle(const TimingModel& m, size_t g, int64_t earliest) const {
  int64_t t = std::max(earliest, g == 0 ? int64_t(1) : lastIssue + 1);
  if (int64_t(g) < outstanding) return t;
  const size_t k = g - size_t(outstanding);
  // Beat g may be requested in the cycle beat k = g - outstanding moves to the output
  // register, the cycle before the consumer can take it (kRespToTake).
  t = std::max(t, pop.get(k) - 1);
  // In flight counts beats until they leave, and beat k leaves only once its consumers
  // have room: not before they started taking its tile (cstart), one beat per `rate`
  // after that, less the FIFO slack. So a load whose consumer waits stops requesting and
  // leaves the channels to the others (sg_ag.sv). Consumer times not known yet are not
  // counted.
  const Link& l = m.links[size_t(out)];
  if (tileHint.size() < l.cons.size()) tileHint.resize(l.cons.size(), 0);
  for (size_t c = 0; c < l.cons.size(); ++c) {
    const int64_t kk = int64_t(k) - l.chain[c];
    if (kk < 0) continue;
    size_t& j = tileHint[c];
    if (j + 1 < l.first.size() && l.first[j + 1] <= kk) ++j;
    if (l.first[j] > kk || (j + 1 < l.first.size() && l.first[j + 1] <= kk))
      j = size_t(std::upper_bound(l.first.begin(), l.first.end(), kk) - l.first.begin()) - 1;
    if (l.cstart[c][j] != kUnknown) t = std::max(t, l.cstart[c][j] + (kk - l.first[j]) * l.rate[c] + 1);
  }
  return t;
}

// Beat requests wait for TimingModel::issueDeferred (pendingRequest / issuePending), which
// places them on the DRAM channels in cycle order over all loads.
bool AgLoad::step(TimingModel& m) {
  Link& l = m.links[size_t(out)];
  bool progress = false;
  while (nextOffer < l.size() && pendTile == SIZE_MAX) {
    const size_t i = nextOffer;
    if (i > 0 && (l.start[i - 1] == kUnknown || issuedThrough < i)) break;
    const int64_t earliest = earliestIssue(m, i);
    if (earliest == kUnknown) break;
    if (l.kinds[i] == Kind::Data) {
      pendTile = i, pendBeat = 0, pendEarliest = earliest, pendG = size_t(l.first[i]);
      break;
    }
    const size_t g = size_t(l.first[i]);
    lastIssue = 0;  // a STOP or DONE beat is no request
    l.offer[i] = std::max(earliest + 1, g == 0 ? int64_t(1) : pop.get(g - 1) + 1);
    ++nextOffer, progress = true;
  }
  return progress;
}

int64_t AgLoad::pendingRequest(const TimingModel& m) const {
  if (pendTile == SIZE_MAX) return kUnknown;
  return requestCycle(m, pendG, pendBeat == 0 ? pendEarliest : 0);
}

bool AgLoad::issuePending(TimingModel& m, int64_t t) {
  Link& l = m.links[size_t(out)];
  const size_t i = pendTile, g = pendG++;
  lastIssue = t;
  if (pendBeat == 0) firstIssue[i] = t;
  int64_t done = t;
  for (int64_t k = 0; k < piecesPerBeat; ++k) done = std::max(done, m.dramPiece(piece(i, pendBeat, k), t));
  m.readBytes += 64 * piecesPerBeat;
  pop.set(g, done + kRespToTake);  // earliest; the tile's start and the beat before bound it
  if (pendBeat == 0) {
    l.offer[i] = pop.get(g);
    ++nextOffer, pendTile = SIZE_MAX;
    return true;
  }
  pop.set(g, std::max(pop.get(g), pop.get(g - 1) + l.interval));  // a beat per cycle, per other cycle on a 1-beat FIFO
  if (++pendBeat < l.beats[i]) return false;
  lastPop[i] = pop.get(g);
  issuedThrough = i + 1, pendTile = SIZE_MAX;
  return true;
}

int64_t AgLoad::beatVisible(const TimingModel& m, size_t i, int64_t k) const {
  return pop.find(size_t(m.links[size_t(out)].first[i] + k));
}

int64_t AgLoad::endFor(TimingModel& m, size_t i, int64_t start) {
  Link& l = m.links[size_t(out)];
  const size_t g0 = size_t(l.first[i]);
  if (issuedThrough > i) return lastPop[i] + 1;
  if (pendTile == i) return kUnknown;
  pop.set(g0, l.kinds[i] == Kind::Data ? std::max(pop.get(g0), start) : start);
  if (l.kinds[i] != Kind::Data || l.beats[i] == 1) {
    lastPop[i] = pop.get(g0);
    issuedThrough = i + 1;
    return lastPop[i] + 1;
  }
  pendTile = i, pendBeat = 1, pendG = g0 + 1;
  return kUnknown;
}

int64_t AgRandomLoad::earliestIssue(TimingModel& m, size_t i) {
  const size_t k = groupOf[i];
  const int64_t e = inEnd(m, 0, k);
  if (e == kUnknown) return kUnknown;
  const bool first = i == 0 || groupOf[i - 1] != k;
  return first ? e + 1 : 0;
}

bool AgRandomLoad::step(TimingModel& m) {
  Link& a = m.links[size_t(in[0].first)];
  const size_t c = size_t(in[0].second);
  bool progress = acceptInOrder(m, 0, nextAccept);
  while (nextHold < a.size() && inStart(m, 0, nextHold) != kUnknown) {
    const size_t k = nextHold;
    int64_t h = inStart(m, 0, k) + a.beats[k];
    if (k >= 2 && groupFirst[k - 2] != SIZE_MAX) {
      const int64_t first = firstIssue[groupFirst[k - 2]];
      if (first == 0) break;  // walk k-2 not taken yet
      h = std::max(h, first);
    }
    a.hold[c][k] = h;
    ++nextHold, progress = true;
  }
  return AgLoad::step(m) || progress;
}

}  // namespace stepgen::timing
