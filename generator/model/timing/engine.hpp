#pragma once
// The timing engine (internal to generator/model/timing): links with bounded FIFOs and the
// unit interface every unit model implements. Times are cycles from `start`.
//
// A link carries one stream as tiles (link tokens). Per tile the producer publishes
// `offer` (earliest cycle its first beat can leave), the engine resolves the producer side
// (`start`, `end`: first beat pushed, one past the last beat pushed) and, per consumer, the
// consumer side (`cstart`, `cend`: first beat taken, one past the last beat taken). Each
// consumer input has a FIFO of `depth` beats (docs/hardware.md section 4): a beat leaves
// the producer when every consumer's FIFO has room, i.e. once the beat `depth` places
// before it has been taken, so a producer runs ahead of a slow consumer by up to `depth`
// beats, and a consumer that streams (a beat in, a beat out) extends that by what its own
// output can absorb (`chain`). Consumers publish `accept` (earliest cycle they take the
// first beat) and `hold` (cycle they let go of the last beat).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/tokens.hpp"

namespace stepgen::timing {

constexpr int64_t kUnknown = -1;
/// Cycles from a DRAM response being available (cycle d) to the consumer being able to take
/// that beat: the AG's output register holds it in d+1 and pushes it into the consumer's
/// input FIFO, whose head shows it in d+2 (sg_ag.sv, sg_fifo.sv; waveform of a load into a
/// store). A link's times are those of the consumer side of that FIFO.
constexpr int64_t kRespToTake = 2;
/// Cycles from a unit's output register to the consumer taking the beat (one FIFO hop).
constexpr int64_t kHop = 1;
/// The cycle more that a beat of a compute unit takes from the cycle the unit took its
/// input to the cycle the next unit can take it: taken in c, valid in the output register in
/// c+1, at the head of the next unit's input FIFO in c+2 (sg_cu.sv, sg_fifo.sv; measured in
/// the waveform of tests/data/graphs/feedback.yaml). The partition, parallelize, merge,
/// select and streaming (CuStream) units pay it; a feedback cycle pays it on every trip.
constexpr int64_t kOutHop = 1;
/// Extra cycles a matmul tile spends in the MAC array besides passes * K (start, write-back).
constexpr int64_t kMatmulOverhead = 2;
/// Cycles a data tile's output bank fills after its last MAC step: the MAC's add stage
/// (sg_cu.sv, MAC stage 2). The next tile's MAC steps do not wait for it.
constexpr int64_t kMacAddStage = 1;

using Kind = Token::Kind;

/// A streaming unit's output end given `e` from its own rate and `inEnd`, the end of the
/// input tile it passes on (one register later); kUnknown while either is not known.
inline int64_t afterInput(int64_t e, int64_t inEnd) {
  return e == kUnknown || inEnd == kUnknown ? kUnknown : std::max(e, inEnd + kHop);
}

/// One producer output feeding one or more consumer input ports (a Broadcast fans out).
struct Link {
  std::string name;
  int producer = -1;
  std::vector<int> cons;             ///< consumer unit per consumer slot
  std::vector<int> consPort;         ///< the consumer unit's input port per consumer slot
  std::vector<bool> streamingCons;   ///< the consumer sets `hold` itself
  /// The consumer takes a tile's beats before its last as they come, one per `rate` from
  /// its `cstart`, whatever its output does; only the last beat waits for `hold`.
  std::vector<bool> dropsBeforeLast;
  std::vector<int64_t> rate;         ///< cycles per beat at each consumer
  std::vector<int64_t> depth;        ///< FIFO depth at each consumer (beats)
  std::vector<int64_t> chain;        ///< beats the consumer's FIFO and what it streams into absorb
  /// Cycles between beats at the most: 2 if a consumer's FIFO holds one beat (sg_fifo's
  /// in_ready is the registered !full, so a beat pushed in t is popped in t+1 and the next
  /// push waits until t+2), else 1.
  int64_t interval = 1;
  std::vector<int64_t> beats, first; ///< per tile: beats, global index of its first beat
  std::vector<Kind> kinds;
  std::vector<int64_t> offer, start, natEnd, end;          ///< producer side, per tile
  std::vector<std::vector<int64_t>> accept, hold, cstart, cend;  ///< per consumer, per tile
  size_t nextStart = 0, nextNat = 0, nextEnd = 0;          ///< producer side: first unresolved tile
  std::vector<size_t> nextCStart, nextCEnd;                ///< per consumer

  /// Tiles of `toks` on a link of `wpb` words per beat.
  void init(const TokenStream& toks, int64_t wpb);
  /// Adds a consumer slot; returns its index.
  int addConsumer(int unit, int port, bool streaming, int64_t rate, int64_t depth, bool dropsBeforeLast = false);
  size_t size() const { return beats.size(); }
  /// True once every tile has left the producer and been taken by every consumer.
  bool finished() const;
};

class TimingModel;

/// A unit model: one RTL unit (or mode of one) in one context.
struct Unit {
  std::string name;
  std::vector<std::pair<int, int>> in;  ///< (link, consumer slot) per input port
  int out = -1;                          ///< output link, -1 if none
  /// The fabric unit it runs on (ArchModel::units index, row-major): DRAM requests of one
  /// cycle go to the channels in this order, as the harness issues them (common/dram.hpp).
  int fabricUnit = 0;
  /// Cycle the unit finished: the end of its output's last tile (set by TimingModel::run for
  /// every unit with an output), or for a store the cycle after it took DONE (set by the unit).
  int64_t doneAt = kUnknown;
  virtual ~Unit() = default;
  /// Publishes whatever became known (accepts, offers, holds); true if anything did.
  virtual bool step(TimingModel& m) = 0;
  /// Producer side: cycle after the last beat of out tile i can leave given its first
  /// beat left at `start`, if nothing downstream stalls it; kUnknown while that is not
  /// known yet (the engine asks again).
  virtual int64_t endFor(TimingModel& m, size_t i, int64_t start) = 0;
  /// Consumer side: true if the unit sets `hold` of the tiles it takes on input `port`
  /// itself (it passes them on as they come); false: the link holds a tile for beats x rate.
  virtual bool streams(int /*port*/) const { return false; }
  /// Consumer side: true if the unit takes the beats before a tile's last on input `port`
  /// without waiting for its output (it drops them), holding only the last (Link::dropsBeforeLast).
  virtual bool dropsBeforeLast(int /*port*/) const { return false; }
  /// Consumer side: one past the cycle the unit took beat k (not the last) of tile i on
  /// input `port`, where it knows that before the tile's hold (the link's default: the beats
  /// are taken as late as the hold allows); kUnknown where it does not.
  virtual int64_t beatTaken(const TimingModel&, int /*port*/, size_t /*i*/, int64_t /*k*/) const { return kUnknown; }
  /// Cycles per beat at which the unit takes its inputs (the links' consumer `rate`).
  virtual int64_t inRate() const { return 1; }
  /// True if the unit passes input beats straight to its output one for one (a beat in, a
  /// beat out, one register), so its output FIFOs add to the slack of its input.
  virtual bool passesThrough() const { return false; }
  /// Earliest cycle beat k of output tile i can be taken, where the unit knows more than
  /// the tile's start + k (a load whose tile outruns its outstanding window comes in
  /// bursts); kUnknown where it does not. Read through TimingModel::beatAt.
  virtual int64_t beatVisible(const TimingModel&, size_t /*i*/, int64_t /*k*/) const { return kUnknown; }
  /// DRAM reads are issued by TimingModel in request-cycle order over all units, as the
  /// channels serve them (see TimingModel::issueDeferred): the cycle of this unit's next
  /// deferred beat request, or kUnknown if it has none.
  virtual int64_t pendingRequest(const TimingModel&) const { return kUnknown; }
  /// Issues the request pendingRequest() named, at that `cycle`; true if that made
  /// something known (a tile's offer or natural end).
  virtual bool issuePending(TimingModel&, int64_t /*cycle*/) { return false; }
  /// Called when nothing else moves: lets go of an input tile whose release step() ties to
  /// an output that cannot drain, where the RTL takes that tile anyway; true if it did.
  virtual bool unstall(TimingModel&) { return false; }

  // Consumer-side view of input port p (the tile as this unit takes it).
  int64_t inStart(const TimingModel& m, int p, size_t i) const;
  int64_t inEnd(const TimingModel& m, int p, size_t i) const;
  bool inDone(const TimingModel& m, int p) const;
  /// Takes the tiles of input p in order: tile 0 from cycle 1, tile i once tile i-1 has been
  /// taken, and not before `wait(i)` if given (kUnknown: not known yet). Advances `next`;
  /// true on progress.
  bool acceptInOrder(TimingModel& m, int p, size_t& next, const std::function<int64_t(size_t)>& wait = {});
};

/// One DRAM channel's busy time: the cycles in which a piece starts or the channel waits
/// out its initiation interval, as [start, end) intervals, maximal (adjacent runs merged).
/// A piece takes `ii` cycles from any cycle on, as the harness's next_free does
/// (common/dram.hpp). Runs that ended more than kWindow cycles before the latest piece are
/// dropped, so memory follows the requests in flight, not the length of the run. Requests
/// are issued in nearly increasing cycle order; one below `floor` (at real sizes, the first
/// beats of a load whose consumer idles longer than the window:
/// docs/step_semantics.md#timing-only) is counted in `late` and served from `floor`.
struct DramChannel {
  static constexpr int64_t kWindow = int64_t(1) << 21;
  std::vector<std::pair<int64_t, int64_t>> runs;  ///< from `head` on, sorted by start (requests mostly append)
  size_t head = 0;  ///< runs before it have left the window
  int64_t floor = 0, maxStart = 0, late = 0;
  /// Takes the earliest `ii` free cycles from s on and returns the first.
  int64_t take(int64_t s, int64_t ii);
};

/// The state every unit model and the link resolution share.
class TimingModel {
 public:
  std::vector<Link> links;
  std::vector<std::unique_ptr<Unit>> units;
  const ArchModel& arch;
  std::vector<DramChannel> channels;  ///< per DRAM channel
  int64_t readBytes = 0, writeBytes = 0, lastWrite = 0;
  /// DRAM start-up (cycles from `start`): the arch's for the first section, 0 for later
  /// sections, which begin long after it.
  int64_t startup = 0;

  explicit TimingModel(const ArchModel& a);

  /// Schedules a 64-byte piece issued at cycle t at the earliest cycle from t on at which
  /// its channel is free for an initiation interval; returns its completion cycle
  /// (docs/hardware.md section 6).
  int64_t dramPiece(uint64_t addr, int64_t t);
  /// Earliest cycle beat k of tile i on link l can be taken: its start + k, or later where
  /// the producer knows its beats come in bursts (Unit::beatVisible). Tile i must have started.
  int64_t beatAt(size_t l, size_t i, int64_t k) const;
  /// Earliest cycle beat k (global index on l, a beat of `tile`) can leave the producer as
  /// far as room goes: every consumer c has taken beat k - chain[c]; kUnknown while that is
  /// not known.
  int64_t roomFor(const Link& l, int64_t k, size_t tile) const;
  /// Resolves what is known of link l's transfers; true on progress.
  bool resolve(Link& l);
  /// Sets every consumer's `chain` from the units' passesThrough (call once links are built).
  void computeChains();
  /// Steps units and links until nothing moves, issuing deferred DRAM reads whenever they
  /// are all that can move, then sets doneAt of every unit whose output ended. Never hangs:
  /// stops when no progress. With STEPGEN_TIMING_CHECK=1 in the environment it also checks
  /// that stepping only the units and links near a change missed nothing: throws
  /// std::logic_error if a full sweep still moves something.
  void run();

 private:
  /// Cycle beat k (global index on l) has been taken by consumer c, bounded from known
  /// tile times; kUnknown while that is not known. `tile` is the tile being pushed.
  int64_t taken(const Link& l, size_t c, int64_t k, size_t tile) const;
  /// Unit::beatTaken of consumer c for beat k (global index on l) of tile j.
  int64_t takenEarly(const Link& l, size_t c, int64_t k, size_t j) const;
  int64_t chainOf(size_t link, size_t c, int depthLeft);
  /// Issues deferred DRAM reads, earliest request first (ties: lower unit index, as the
  /// harness calls DramModel::request in AG order), until one makes something known.
  /// False if none was pending. Appends every unit that issued to `issued`.
  bool issueDeferred(std::vector<int>& issued);
};

}  // namespace stepgen::timing
