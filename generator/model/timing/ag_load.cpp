// AgLoad and AgRandomLoad: rtl_templates/sg_ag.sv load modes (linear walk; random
// per_group walk of expert weight tiles). docs/hardware.md sections 2 and 7.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

void AgLoad::issueBeat(TimingModel& m, size_t g, size_t tok, size_t beatInTok, int64_t earliest) {
  int64_t t = std::max(earliest, g == 0 ? int64_t(1) : issue[g - 1] + 1);
  if (int64_t(g) >= outstanding) t = std::max(t, pop[g - size_t(outstanding)] + 1);
  issue[g] = t;
  int64_t done = t;
  for (int64_t k = 0; k < piecesPerBeat; ++k)
    done = std::max(done, m.dramPiece(piece(tok, int64_t(beatInTok), k), t));
  m.readBytes += 64 * piecesPerBeat;
  pop[g] = done + kRespToTake;  // earliest; refined when the transfer starts
}

bool AgLoad::step(TimingModel& m) {
  Link& l = m.links[size_t(out)];
  bool progress = false;
  while (nextOffer < l.size()) {
    const size_t i = nextOffer;
    if (i > 0 && l.start[i - 1] == kUnknown) break;
    const size_t g = size_t(l.first[i]);
    const int64_t earliest = earliestIssue(m, i);
    if (earliest == kUnknown) break;
    if (l.kinds[i] == Kind::Data) {
      issueBeat(m, g, i, 0, earliest);
      l.offer[i] = pop[g];
    } else {
      l.offer[i] = std::max(earliest + 1, g == 0 ? int64_t(1) : pop[g - 1] + 1);
    }
    ++nextOffer, progress = true;
  }
  return progress;
}

int64_t AgLoad::endFor(TimingModel& m, size_t i, int64_t start) {
  Link& l = m.links[size_t(out)];
  const size_t g0 = size_t(l.first[i]);
  if (l.kinds[i] != Kind::Data) {
    pop[g0] = start;
    return start + 1;
  }
  for (int64_t b = 0; b < l.beats[i]; ++b) {
    const size_t g = g0 + size_t(b);
    if (b > 0) issueBeat(m, g, i, size_t(b));
    pop[g] = std::max(pop[g], b == 0 ? start : pop[g - 1] + 1);
  }
  return pop[g0 + size_t(l.beats[i]) - 1] + 1;
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
      const size_t g = size_t(m.links[size_t(out)].first[groupFirst[k - 2]]);
      if (issue[g] == 0) break;  // walk k-2 not taken yet
      h = std::max(h, issue[g]);
    }
    a.hold[c][k] = h;
    ++nextHold, progress = true;
  }
  return AgLoad::step(m) || progress;
}

}  // namespace stepgen::timing
