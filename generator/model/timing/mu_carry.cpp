// MuKeep and MuReplay: rtl_templates/sg_mu.sv keep and replay (a stream carried to a later
// section in a memory unit). docs/hardware.md section 2.
#include "model/timing/units.hpp"

namespace stepgen::timing {

bool MuKeep::step(TimingModel& m) {
  bool progress = acceptInOrder(m, 0, nextAccept);
  const Link& l = m.links[size_t(in[0].first)];
  if (doneAt == kUnknown && inDone(m, 0)) {
    doneAt = inStart(m, 0, l.size() - 1) + 1;  // the context ends as its DONE is taken
    progress = true;
  }
  return progress;
}

bool MuReplay::step(TimingModel& m) {
  if (offered) return false;
  Link& o = m.links[size_t(out)];
  for (size_t j = 0; j < o.size(); ++j) o.offer[j] = kReplayFirstOffer;
  offered = true;
  return true;
}

int64_t MuReplay::endFor(TimingModel& m, size_t i, int64_t start) { return start + m.links[size_t(out)].beats[i] * rate; }

}  // namespace stepgen::timing
