// AgStore: rtl_templates/sg_ag.sv store mode (store = 1): a beat per cycle from in0, each
// written to the next pieces of the walk (writes are posted), or with random = 1 to the tile
// its meta row on in1 names. docs/hardware.md section 2.
#include <algorithm>

#include "model/timing/units.hpp"

namespace stepgen::timing {

bool AgStore::step(TimingModel& m) {
  const Link& l = m.links[size_t(in[0].first)];
  const size_t c = size_t(in[0].second);
  bool progress = false;
  if (random) {
    // A meta row takes a job queue entry: row d waits for tile d-2's first beat.
    progress |= acceptInOrder(m, 1, nextMeta, [&](size_t k) {
      const size_t d = metaData.at(k);
      return d == SIZE_MAX || d < 2 ? int64_t(0) : inStart(m, 0, dataTile.at(d - 2));
    });
    const Link& meta = m.links[size_t(in[1].first)];
    const size_t mc = size_t(in[1].second);
    progress |= acceptInOrder(m, 0, nextAccept, [&](size_t i) {
      if (l.kinds[i] == Kind::Stop) return int64_t(0);
      const size_t k = l.kinds[i] == Kind::Done ? meta.size() - 1 : metaTile.at(dataOf.at(i));
      if (meta.nextCStart[mc] <= k) return kUnknown;
      return inStart(m, 1, k) + (l.kinds[i] == Kind::Done ? 1 : 2);
    });
  } else {
    progress = acceptInOrder(m, 0, nextAccept);
  }
  // STOP and DONE beats write nothing; a data tile waits for issueDeferred.
  while (nextWrite < l.nextCStart[c] && l.kinds[nextWrite] != Kind::Data) {
    if (l.kinds[nextWrite] == Kind::Done) doneAt = inStart(m, 0, nextWrite) + 1;
    ++nextWrite, progress = true;
  }
  return progress;
}

int64_t AgStore::pendingRequest(const TimingModel& m) const {
  const Link& l = m.links[size_t(in[0].first)];
  if (nextWrite >= l.nextCStart[size_t(in[0].second)] || l.kinds[nextWrite] != Kind::Data) return kUnknown;
  return std::max(inStart(m, 0, nextWrite) + writeBeat, m.beatAt(size_t(in[0].first), nextWrite, writeBeat));
}

bool AgStore::issuePending(TimingModel& m, int64_t t) {
  const Link& l = m.links[size_t(in[0].first)];
  for (int64_t k = 0; k < piecesPerBeat; ++k) {
    m.lastWrite = std::max(m.lastWrite, m.dramPiece(piece(nextWrite, writeBeat, k), t));
    m.writeBytes += 64;
  }
  if (++writeBeat < l.beats[nextWrite]) return false;
  writeBeat = 0, ++nextWrite;
  return true;  // step() may pass the STOP / DONE beats behind the tile
}

}  // namespace stepgen::timing
