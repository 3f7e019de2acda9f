#include "common/dram.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace stepgen {

int dramChannel(uint64_t addr, int channels) {
    // h = p + p/32 + p/32^2 + ... (p = piece index), modulo channels: the 32 pieces of a
    // 2 KiB block rotate over the channels exactly as p % channels does, and each further
    // block shifts the rotation by one, so a column of tiles whose rows are a power-of-two
    // number of pieces apart no longer lands on one channel.
    uint64_t h = 0;
    for (uint64_t p = addr / kDramPieceBytes; p; p /= 32) h += p;
    return static_cast<int>(h % static_cast<uint64_t>(channels));
}


DramModel::DramModel(DramTiming t, size_t bytes, int nAg) : t_(t), mem_(bytes, 0) {
    if (t.channels < 1) throw std::invalid_argument("DramModel: channels must be >= 1");
    if (t.ii < 1) throw std::invalid_argument("DramModel: ii must be >= 1");
    if (nAg < 0) throw std::invalid_argument("DramModel: negative number of AGs");
    nextFree_.assign(static_cast<size_t>(t.channels), 0);
    queues_.resize(static_cast<size_t>(nAg));
}

const DramModel::AgQueue& DramModel::queue(int ag) const {
    if (ag < 0 || ag >= numAg())
        throw std::out_of_range("DramModel: AG index " + std::to_string(ag) + " out of range (" +
                                std::to_string(numAg()) + " AGs)");
    return queues_[static_cast<size_t>(ag)];
}

void DramModel::checkAddr(uint64_t addr) const {
    if (addr % kDramPieceBytes != 0)
        throw std::invalid_argument("DramModel: piece address " + std::to_string(addr) +
                                    " is not 64-byte aligned");
    if (addr > mem_.size() || mem_.size() - addr < kDramPieceBytes)
        throw std::out_of_range("DramModel: piece address " + std::to_string(addr) +
                                " outside the " + std::to_string(mem_.size()) +
                                "-byte memory image");
}

uint64_t DramModel::schedulePiece(uint64_t addr, uint64_t cycle) {
    const size_t ch = static_cast<size_t>(dramChannel(addr, t_.channels));
    const uint64_t start = std::max({cycle, nextFree_[ch], t_.startup});
    nextFree_[ch] = start + t_.ii;
    return start + t_.latency;
}

void DramModel::request(int ag, bool write, const std::vector<uint64_t>& pieceAddrs,
                        const uint8_t* wdata, uint64_t cycle) {
    queue(ag);  // range check
    if (pieceAddrs.empty()) throw std::invalid_argument("DramModel: request without pieces");
    if (write && wdata == nullptr) throw std::invalid_argument("DramModel: write without data");
    for (uint64_t a : pieceAddrs) checkAddr(a);

    uint64_t done = 0;
    for (uint64_t a : pieceAddrs) done = std::max(done, schedulePiece(a, cycle));

    const uint64_t bytes = pieceAddrs.size() * kDramPieceBytes;
    if (write) {
        for (size_t k = 0; k < pieceAddrs.size(); ++k)
            std::memcpy(mem_.data() + pieceAddrs[k], wdata + k * kDramPieceBytes, kDramPieceBytes);
        writeBytes_ += bytes;
        lastWriteDone_ = std::max(lastWriteDone_, done);
        return;
    }
    Response r;
    r.ready = done;
    if (!spare_.empty()) {
        r.data = std::move(spare_.back());
        spare_.pop_back();
    }
    r.data.resize(bytes);
    for (size_t k = 0; k < pieceAddrs.size(); ++k)
        std::memcpy(r.data.data() + k * kDramPieceBytes, mem_.data() + pieceAddrs[k], kDramPieceBytes);
    queues_[static_cast<size_t>(ag)].q.push_back(std::move(r));
    ++outstandingTotal_;
    readBytes_ += bytes;
}

bool DramModel::responseReady(int ag, uint64_t cycle) const {
    const AgQueue& aq = queue(ag);
    return !aq.q.empty() && aq.q.front().ready <= cycle && aq.lastPop != cycle;
}

const std::vector<uint8_t>& DramModel::responseData(int ag) const {
    const AgQueue& aq = queue(ag);
    if (aq.q.empty())
        throw std::logic_error("DramModel: AG " + std::to_string(ag) + " has no outstanding read");
    return aq.q.front().data;
}

uint64_t DramModel::responseReadyCycle(int ag) const {
    const AgQueue& aq = queue(ag);
    if (aq.q.empty())
        throw std::logic_error("DramModel: AG " + std::to_string(ag) + " has no outstanding read");
    return aq.q.front().ready;
}

void DramModel::popResponse(int ag, uint64_t cycle) {
    if (!responseReady(ag, cycle))
        throw std::logic_error("DramModel: AG " + std::to_string(ag) +
                               " has no response deliverable at cycle " + std::to_string(cycle));
    AgQueue& aq = queues_[static_cast<size_t>(ag)];
    spare_.push_back(std::move(aq.q.front().data));
    aq.q.pop_front();
    aq.lastPop = cycle;
    --outstandingTotal_;
}

size_t DramModel::outstandingReads(int ag) const { return queue(ag).q.size(); }

}  // namespace stepgen
