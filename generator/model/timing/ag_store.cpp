// AgStore: rtl_templates/sg_ag.sv store mode (store = 1): a beat per cycle from in0, each
// written to the next pieces of the walk (writes are posted). docs/hardware.md section 2.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

bool AgStore::step(TimingModel& m) {
  Link& l = m.links[size_t(in[0].first)];
  const size_t c = size_t(in[0].second);
  bool progress = acceptInOrder(m, 0, nextAccept);
  while (nextWrite < l.nextCStart[c]) {
    const size_t i = nextWrite;
    const int64_t s = inStart(m, 0, i);
    if (l.kinds[i] == Kind::Data)
      for (int64_t b = 0; b < l.beats[i]; ++b)
        for (int64_t k = 0; k < piecesPerBeat; ++k) {
          const int64_t t = s + b + 1;
          m.lastWrite = std::max(m.lastWrite, m.dramPiece(piece(i, b, k), t));
          m.writeBytes += 64;
        }
    if (l.kinds[i] == Kind::Done) doneAt = s + 1;
    ++nextWrite, progress = true;
  }
  return progress;
}

}  // namespace stepgen::timing
