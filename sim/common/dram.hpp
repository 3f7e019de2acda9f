// DRAM timing model shared by the Verilator harness and the C++ approximate model.
//
// Implements exactly docs/hardware.md section 6:
//   * memory is moved in 64-byte pieces; a request carries one or more piece addresses
//     (P pieces = one beat of the requesting AG);
//   * a request accepted at cycle t sends each piece (in the order given) to channel
//     ch = dramChannel(addr, channels); the piece starts at max(t, next_free[ch], startup),
//     sets next_free[ch] = start + ii and completes at start + latency;
//   * a read response (all pieces of one request) is offered to its AG, in request order,
//     from the cycle its latest piece completes; one response per AG per cycle;
//   * writes are posted: the requester never sees a response. The run's cycle count is
//     max(cycle at which done rose, lastWriteDone()).
//
// Conventions (the model must follow the same ones to get identical cycle counts):
//   * when several AGs issue in the same cycle, call request() in increasing AG index;
//     pieces inside a request are scheduled in the order of pieceAddrs;
//   * data semantics: a write updates the memory image when it is accepted (request());
//     a read captures its data when it is accepted. Within one AG the order of requests
//     is therefore the order of the memory effects.
//
// No Verilator types here: this class is used by the C++ model too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace stepgen {

/// DRAM timing parameters (the arch's `offchip` section). All times in cycles.
struct DramTiming {
    int channels = 1;       ///< number of independent channels (>= 1); piece p uses channel p % channels
    uint64_t latency = 1;   ///< cycles from a piece's start to its completion
    uint64_t ii = 1;        ///< initiation interval: cycles between piece starts on one channel
    uint64_t startup = 0;   ///< no piece starts before this absolute cycle (cycle 0 = start pulse)
};

/// Channel of the 64-byte piece at byte address `addr` (docs/hardware.md section 6):
/// (p + p/32 + p/32^2 + ...) % channels with p = addr / 64 (an address hash, as memory
/// controllers use, so strided tile columns spread over the channels; pieces 0..31 map to
/// p % channels).
int dramChannel(uint64_t addr, int channels);

/// Bytes per DRAM piece: the unit of addressing, channel interleaving and byte counting.
constexpr size_t kDramPieceBytes = 64;

/// Byte-addressed memory image plus the section-6 timing model.
///
/// Usage per cycle `c` (cycles must be non-decreasing across calls):
///   for each AG a with a request this cycle (in increasing a): request(a, ..., c);
///   for each AG a: if (responseReady(a, c)) { use responseData(a); popResponse(a, c); }
class DramModel {
public:
    /// Creates a model with `bytes` bytes of zero-filled memory and `nAg` address
    /// generators. Throws std::invalid_argument if channels < 1, ii < 1, nAg < 0.
    DramModel(DramTiming t, size_t bytes, int nAg);

    /// Accepts a request of AG `ag` at cycle `cycle`. `pieceAddrs` are byte addresses of
    /// 64-byte pieces (must be 64-aligned and inside the image). For a write, `wdata`
    /// points to pieceAddrs.size()*64 bytes (piece k at wdata + 64*k), which are written
    /// into the image now; for a read, `wdata` is ignored (may be null) and the data is
    /// captured now and queued for the AG. Throws std::out_of_range for a bad AG index or
    /// an address outside the image, std::invalid_argument for an unaligned address, an
    /// empty piece list or a null wdata on a write.
    void request(int ag, bool write, const std::vector<uint64_t>& pieceAddrs,
                 const uint8_t* wdata, uint64_t cycle);

    /// True if AG `ag`'s oldest outstanding read may be delivered at cycle `cycle`: it has
    /// completed (cycle >= its ready cycle) and no response was popped for `ag` at `cycle`.
    bool responseReady(int ag, uint64_t cycle) const;

    /// Data of AG `ag`'s oldest outstanding read (pieces*64 bytes, piece k at byte 64*k).
    /// Throws std::logic_error if the AG has no outstanding read.
    const std::vector<uint8_t>& responseData(int ag) const;

    /// Cycle from which the oldest outstanding read of `ag` is complete (ignores the
    /// one-per-cycle rule). Throws std::logic_error if the AG has no outstanding read.
    uint64_t responseReadyCycle(int ag) const;

    /// Removes AG `ag`'s oldest outstanding read, delivered at `cycle` (which must satisfy
    /// responseReady(ag, cycle)). Throws std::logic_error otherwise.
    void popResponse(int ag, uint64_t cycle);

    /// Number of reads of AG `ag` not yet popped.
    size_t outstandingReads(int ag) const;
    /// Number of reads not yet popped, over all AGs.
    size_t outstandingReads() const { return outstandingTotal_; }

    /// Total bytes read (64 per read piece, counted at acceptance).
    uint64_t readBytes() const { return readBytes_; }
    /// Total bytes written (64 per written piece, counted at acceptance).
    uint64_t writeBytes() const { return writeBytes_; }
    /// Completion cycle of the latest-completing write piece so far (0 if none).
    uint64_t lastWriteDone() const { return lastWriteDone_; }

    /// The memory image (size() bytes, little-endian fp32 words as the fabric sees them).
    uint8_t* mem() { return mem_.data(); }
    const uint8_t* mem() const { return mem_.data(); }
    /// Size of the memory image in bytes.
    size_t size() const { return mem_.size(); }
    /// Number of AGs this model serves.
    int numAg() const { return static_cast<int>(queues_.size()); }
    /// The timing parameters.
    const DramTiming& timing() const { return t_; }

private:
    struct Response {
        uint64_t ready;             // cycle from which the response may be delivered
        std::vector<uint8_t> data;  // pieces*64 bytes
    };
    struct AgQueue {
        std::deque<Response> q;
        uint64_t lastPop = UINT64_MAX;  // cycle of the last pop (one response per cycle)
    };

    // Schedules one piece; returns its completion cycle.
    uint64_t schedulePiece(uint64_t addr, uint64_t cycle);
    void checkAddr(uint64_t addr) const;
    const AgQueue& queue(int ag) const;

    DramTiming t_;
    std::vector<uint8_t> mem_;
    std::vector<uint64_t> nextFree_;
    std::vector<AgQueue> queues_;
    std::vector<std::vector<uint8_t>> spare_;  // recycled response buffers
    size_t outstandingTotal_ = 0;
    uint64_t readBytes_ = 0;
    uint64_t writeBytes_ = 0;
    uint64_t lastWriteDone_ = 0;
};

}  // namespace stepgen
