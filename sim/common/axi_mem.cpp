#include "common/axi_mem.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace stepgen {

AxiMemory::AxiMemory(DramModel& dram) : dram_(dram), ports_(size_t(dram.numAg())) {}

std::vector<uint64_t> AxiMemory::pieces(uint64_t addr, unsigned len) {
  if (addr % kDramPieceBytes) throw std::invalid_argument("AXI burst at unaligned address " + std::to_string(addr));
  const uint64_t end = addr + uint64_t(len + 1) * kDramPieceBytes;
  if (addr / 4096 != (end - 1) / 4096)
    throw std::invalid_argument("AXI burst of " + std::to_string(len + 1) + " beats at " + std::to_string(addr) +
                                " crosses a 4 KiB boundary");
  std::vector<uint64_t> v;
  for (unsigned i = 0; i <= len; ++i) v.push_back(addr + uint64_t(i) * kDramPieceBytes);
  return v;
}

AxiOffer AxiMemory::offer(int p, uint64_t c) const {
  const Port& q = ports_.at(size_t(p));
  AxiOffer o;
  if (!q.rBeats.empty() && dram_.responseReady(p, c)) {
    o.rvalid = true;
    o.rlast = q.rBeat + 1 == q.rBeats.front();
    o.rdata = dram_.responseData(p).data() + size_t(q.rBeat) * kDramPieceBytes;
  }
  o.bvalid = !q.bReady.empty() && q.bReady.front() <= c;
  return o;
}

void AxiMemory::ar(int p, uint64_t addr, unsigned len, uint64_t c) {
  dram_.request(p, false, pieces(addr, len), nullptr, c);
  ports_.at(size_t(p)).rBeats.push_back(len + 1);
}

void AxiMemory::aw(int p, uint64_t addr, unsigned len, uint64_t) {
  ports_.at(size_t(p)).aw.push_back(pieces(addr, len));  // checks alignment and the 4 KiB rule now
}

// W beats follow their AW here (w() throws otherwise), so a burst is complete, and goes to
// the DRAM model, with its last W beat.
void AxiMemory::w(int p, const uint8_t* data, bool last, uint64_t c) {
  Port& q = ports_.at(size_t(p));
  if (q.aw.empty()) throw std::logic_error("AXI port " + std::to_string(p) + ": W beat before its AW");
  q.wdata.insert(q.wdata.end(), data, data + kDramPieceBytes);
  const std::vector<uint64_t>& burst = q.aw.front();
  const bool full = q.wdata.size() == burst.size() * kDramPieceBytes;
  if (full != last)
    throw std::invalid_argument("AXI port " + std::to_string(p) + ": WLAST " + (last ? "on" : "missing on") +
                                " beat " + std::to_string(q.wdata.size() / kDramPieceBytes) + " of a " +
                                std::to_string(burst.size()) + "-beat burst");
  if (!full) return;
  dram_.request(p, true, burst, q.wdata.data(), c);
  q.aw.pop_front();
  q.wdata.clear();
  q.bReady.push_back(std::max(c + 1, dram_.lastWriteDone()));
}

void AxiMemory::r(int p, uint64_t c) {
  Port& q = ports_.at(size_t(p));
  if (q.rBeats.empty()) throw std::logic_error("AXI port " + std::to_string(p) + ": R beat taken with no read");
  if (++q.rBeat == q.rBeats.front()) {
    dram_.popResponse(p, c);
    q.rBeats.pop_front();
    q.rBeat = 0;
  }
}

void AxiMemory::b(int p, uint64_t) {
  Port& q = ports_.at(size_t(p));
  if (q.bReady.empty()) throw std::logic_error("AXI port " + std::to_string(p) + ": B taken with no write");
  q.bReady.pop_front();
}

bool AxiMemory::idle() const {
  for (const Port& q : ports_)
    if (!q.rBeats.empty() || !q.aw.empty() || !q.bReady.empty()) return false;
  return true;
}

}  // namespace stepgen
