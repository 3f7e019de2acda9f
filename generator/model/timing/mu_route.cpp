// MuRoute: rtl_templates/sg_route.sv inside sg_mu (route mode, data or meta output): both
// inputs taken one beat per cycle; the first output beat is valid 3 cycles after the later
// DONE was taken, then one beat per cycle. docs/hardware.md section 7.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

bool MuRoute::step(TimingModel& m) {
  bool progress = false;
  int64_t lastDone = 0;
  bool allIn = true;
  for (size_t p = 0; p < in.size(); ++p) {
    if (in[p].first < 0) continue;  // the meta twin has no port 0
    const Link& l = m.links[size_t(in[p].first)];
    progress |= acceptInOrder(m, int(p), nextAccept[p], [&](size_t i) { return waitFor(m, p, i); });
    allIn = allIn && inDone(m, int(p));
    if (allIn) lastDone = std::max(lastDone, inEnd(m, int(p), l.size() - 1));
  }
  Link& o = m.links[size_t(out)];
  if (!offered && allIn) {
    for (size_t j = 0; j < o.size(); ++j) o.offer[j] = lastDone + 2;  // DONE taken at end - 1, valid 3 later
    offered = true, progress = true;
  }
  return progress;
}

int64_t MuRoute::endFor(TimingModel& m, size_t i, int64_t start) { return start + m.links[size_t(out)].beats[i]; }

}  // namespace stepgen::timing
