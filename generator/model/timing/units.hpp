#pragma once
// The unit models of the timing engine, one per RTL unit behaviour (docs/hardware.md
// section 2 and 7). Each is implemented in the file of the same name and chosen by
// build.cpp from the unit's configuration fields, as the RTL chooses its behaviour.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "model/timing/engine.hpp"

namespace stepgen::timing {

/// An AG's walk as its configuration fields give it (sg_ag.sv): for i3 < n3, i2 < n2,
/// i1 < n1, i0 < n0 a tile at base + sum(i_l * s_l) bytes of `rows` rows of `ppr` 64-byte
/// pieces, `rowStride` bytes apart. Piece addresses are computed when asked for, so a walk
/// over gigabytes costs no memory.
struct AgWalk {
  int64_t n[4] = {1, 1, 1, 1}, s[4] = {0, 0, 0, 0}, base = 0, rows = 1, ppr = 1, rowStride = 0;
  int64_t piecesPerTile() const { return rows * ppr; }
  int64_t pieces() const { return n[0] * n[1] * n[2] * n[3] * piecesPerTile(); }
  /// Address of piece j (row-major) of the tile at byte address t.
  uint64_t inTile(int64_t t, int64_t j) const { return uint64_t(t + j / ppr * rowStride + j % ppr * 64); }
  /// Address of piece q of the whole walk, in walk order (i0 innermost).
  uint64_t flat(int64_t q) const {
    int64_t t = q / piecesPerTile(), a = base;
    for (int l = 0; l < 4; ++l) a += t % n[l] * s[l], t /= n[l];
    return inTile(a, q % piecesPerTile());
  }
};

/// What every sg_ag.sv mode moves: the 64-byte DRAM pieces of each tile it loads or stores.
/// Per tile of its data stream: where its pieces start (linear: index of its first piece in
/// the walk, a dynamic stream's tiles taking the next pieces as the AG moves beats; random:
/// the byte address of the walk tile its address names) and how many it has.
struct AgUnit : Unit {
  AgWalk walk;
  bool random = false;
  std::vector<int64_t> tileStart, tilePieces;
  int64_t piecesPerBeat = 1;

  /// Address of piece k of beat b of tile i. Throws std::logic_error past the tile's pieces.
  uint64_t piece(size_t i, int64_t b, int64_t k) const {
    const int64_t j = b * piecesPerBeat + k;
    if (j >= tilePieces.at(i)) throw std::logic_error("internal error: AG piece beyond its tile");
    return random ? walk.inTile(tileStart[i], j) : walk.flat(tileStart[i] + j);
  }
};

/// Per-beat values of a load for the beats still in play: the last `size` beats (global
/// index g). Reading a beat that has left the window is an internal error, never a stale
/// value; so a load over millions of beats keeps a few hundred.
class BeatWindow {
 public:
  void reset(int64_t size) {
    int64_t n = 1;
    while (n < size) n *= 2;
    v_.assign(size_t(n), 0), tag_.assign(size_t(n), -1);
  }
  /// The value of beat g, or kUnknown if g is not (or no longer) in the window.
  int64_t find(size_t g) const {
    const size_t k = g & (v_.size() - 1);
    return tag_[k] == int64_t(g) ? v_[k] : kUnknown;
  }
  int64_t get(size_t g) const {
    const size_t k = g & (v_.size() - 1);
    if (tag_[k] != int64_t(g)) throw std::logic_error("internal error: AG beat left the window");
    return v_[k];
  }
  void set(size_t g, int64_t x) {
    const size_t k = g & (v_.size() - 1);
    v_[k] = x, tag_[k] = int64_t(g);
  }

 private:
  std::vector<int64_t> v_, tag_;
};

/// sg_ag.sv linear load (store = 0, random = 0): one beat request per cycle while fewer
/// than `outstanding` beats are in flight; responses leave in order (ag_load.cpp). Beats
/// are numbered along the output link (Link::first).
struct AgLoad : AgUnit {
  int64_t outstanding = 16;
  BeatWindow pop;  ///< per beat (global index, the last outstanding + 2): the cycle it leaves
  /// Request cycle of the last beat handled (0 for a STOP or DONE beat): beats are requested
  /// strictly in order, so it is the previous beat's whenever a beat's request is computed.
  int64_t lastIssue = 0;
  std::vector<int64_t> firstIssue, lastPop;  ///< per tile: request cycle of its first beat (0: not yet), leave cycle of its last
  size_t nextOffer = 0;
  size_t issuedThrough = 0;  ///< tiles whose beats have all been requested
  /// The tile whose next beat request waits for TimingModel to issue it in cycle order
  /// (SIZE_MAX: none): beat 0 before the tile is offered, then beats 1.. once it started.
  size_t pendTile = SIZE_MAX;
  int64_t pendBeat = 0, pendEarliest = 0;
  size_t pendG = 0;  ///< global index of that beat
  /// Per consumer of the output: the tile of the beat requestCycle looked at last (beats
  /// are asked for in order, so the next one is in the same tile or the one after).
  mutable std::vector<size_t> tileHint;

  /// Earliest cycle tile i's first beat may issue (a random load waits for its address), or
  /// kUnknown while that is not known yet.
  virtual int64_t earliestIssue(TimingModel&, size_t) { return 0; }
  /// Request cycle of beat g (global index): a beat per cycle, at most `outstanding` in
  /// flight (not yet left to the consumers).
  int64_t requestCycle(const TimingModel& m, size_t g, int64_t earliest) const;
  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t i, int64_t start) override;
  int64_t pendingRequest(const TimingModel& m) const override;
  bool issuePending(TimingModel& m, int64_t t) override;
  /// A beat waits for its DRAM response (the bursts of the outstanding window).
  int64_t beatVisible(const TimingModel& m, size_t i, int64_t k) const override;
};

/// sg_ag.sv random per_group load (RandomOffChipLoad of expert weights): in0 carries the
/// route unit's meta groups (one link tile per group); each group runs one walk. A group's
/// beats are taken as they come, its closing beat needs one of the two job-queue entries
/// (group k closes once walk k-2 has been taken); a group closed in cycle a has its first
/// request in a+2 (ag_load.cpp). A run load (count = 1) is the same unit with one meta row
/// per group and that row's count of tiles per walk.
struct AgRandomLoad : AgLoad {
  std::vector<size_t> groupOf;     ///< per out tile: its meta group (DONE: the input DONE)
  std::vector<size_t> groupFirst;  ///< per meta group: its first out tile, or SIZE_MAX if empty
  size_t nextAccept = 0, nextHold = 0;

  bool streams(int) const override { return true; }
  int64_t earliestIssue(TimingModel& m, size_t i) override;
  bool step(TimingModel& m) override;
};

/// sg_ag.sv store (store = 1): takes a beat per cycle and writes it to the next pieces of
/// the walk; finishes at DONE (ag_store.cpp). A random store (random = 1) writes data tile d
/// at the tile its meta row d on in1 names: the rows wait in a 2-entry job queue (row d is
/// taken once tile d-2's first beat was), and tile d's first beat is taken 2 cycles after
/// its row at the earliest; the in0 DONE after the in1 DONE.
struct AgStore : AgUnit {
  size_t nextAccept = 0, nextWrite = 0;
  int64_t writeBeat = 0;  ///< the next beat of tile nextWrite to write
  // Random store only: per in0 link tile its data ordinal (SIZE_MAX: STOP / DONE); per data
  // ordinal the in0 tile and the in1 tile of its meta row; per in1 tile its data ordinal.
  std::vector<size_t> dataOf, dataTile, metaTile, metaData;
  size_t nextMeta = 0;

  bool step(TimingModel& m) override;
  /// A data beat's write goes to DRAM in cycle order with every other request
  /// (TimingModel::issueDeferred): in the cycle the store takes it (req_valid = in0_valid).
  int64_t pendingRequest(const TimingModel& m) const override;
  bool issuePending(TimingModel& m, int64_t t) override;
  int64_t endFor(TimingModel&, size_t, int64_t start) override { return start; }
};

/// sg_cu.sv func matmul: two operand banks; tile i computes `computeCycles[i]` (passes * K)
/// once both operands are in and output bank i%2 has drained (cu_matmul.cpp).
struct CuMatmul : Unit {
  std::vector<int64_t> computeCycles;  ///< per in tile: passes * K (dynamic M differs per tile)
  std::vector<int64_t> computeEnd;     ///< per in tile: cycle after its last MAC step (a data tile's result is in the output bank kMacAddStage later)
  size_t nextAccept = 0, nextCompute = 0, nextOffer = 0;

  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t i, int64_t) override;
};

/// sg_cu.sv silu / exp / recip / mul / add / sub / rowscale / scan: one beat per cycle, inputs in lockstep, one
/// register stage (cu_stream.cpp). rowmax / rowsum: the same with a row of `rowBeats` beats
/// in before its first beat leaves, behind `treeStages` = log2(words per beat) register
/// stages (the pipelined tree): a DATA tile is out rowBeats + treeStages cycles after it came
/// in, a STOP or DONE 1 + treeStages.
struct CuStream : Unit {
  size_t nextAccept = 0, nextOffer = 0, nextHold = 0;
  int64_t rowBeats = 1, treeStages = 0;
  /// rowscale whose in1 rows have n > 1 beats: in0 waits n - 1 cycles after each row of
  /// `rowscaleRowBeats` beats while in1 drops the rest of its row (0: no drops).
  int64_t rowscaleDrops = 0, rowscaleRowBeats = 1;
  /// Cycles from a tile's first beat taken to its first beat valid at the output.
  int64_t latency(const Link& o, size_t i) const { return (o.kinds[i] == Kind::Data ? rowBeats : 1) + treeStages; }

  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t i, int64_t start) override;
  bool streams(int) const override { return true; }
  bool passesThrough() const override { return in.size() == 1; }
  /// rowmax / rowsum on a tile of one row: its output starts only after its last input
  /// beat, so the unit takes the whole tile whatever its output does (step() releases an
  /// input tile when the output tile ends, which is the same cycle while the output drains).
  bool unstall(TimingModel& m) override;
  /// Beat k leaves latency + kOutHop after its input beats.
  int64_t beatVisible(const TimingModel& m, size_t i, int64_t k) const override;
};

/// sg_cu.sv func expand: in0 = data elements held in a bank, in1 = ref; out tile j is ref
/// tile j's copy of its data element (cu_expand.cpp).
struct CuExpand : Unit {
  std::vector<size_t> groupOf;  ///< per ref tile: its data element (the ref DONE: the data DONE)
  std::vector<size_t> closer;   ///< per data element: the ref tile that uses it up
  size_t nextData = 0, nextRef = 0, nextOffer = 0, nextHold = 0;

  int64_t freeFrom(TimingModel& m, size_t k) const;
  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t j, int64_t start) override;
  bool streams(int port) const override { return port == 1; }
  /// A copy's last beat leaves with the ref tile's last beat (kHop after it).
  int64_t beatVisible(const TimingModel& m, size_t j, int64_t k) const override;
  /// Link time of copy j's last beat as the ref tile allows; kUnknown while not known.
  int64_t lastBeat(const TimingModel& m, size_t j) const;
};

/// sg_cu.sv func parallelize: one output of Parallelize(n); func partition: one output of a
/// Partition(b 0), which also reads the selector on in1 (cu_parallelize.cpp). A fed-back
/// selector may be longer than the data: its spare tiles are drained after the data DONE.
struct CuParallelize : Unit {
  int index = 0;               ///< this unit's output (field idx_word)
  std::vector<int64_t> outOf;  ///< per in tile: its out tile, or -1 (dropped)
  std::vector<size_t> inOf;    ///< per out tile: its in tile
  /// Partition: per data tile, its selector tile (SIZE_MAX for a data STOP); per selector
  /// tile, the data tile that closes the element before it (SIZE_MAX: none, the first).
  std::vector<size_t> selOf, afterData;
  /// Partition: the first selector tile that only the drain after the data DONE takes (the
  /// spares after the first one, which is taken like an element's selector; the selector
  /// DONE is taken with the data DONE if it is there, else by the drain).
  size_t drainFrom = SIZE_MAX;
  bool partition = false;
  size_t nextAccept = 0, nextOffer = 0, nextHold = 0, nextSel = 0;

  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t j, int64_t start) override;
  /// Cycle the unit lets go of the last input beat of out tile j: once the output register
  /// can take it; kUnknown while not known.
  int64_t keptHold(TimingModel& m, size_t j) const;
  /// A passed tile's beat k is taken once the register has sent beat k-1 (keptHold's rule
  /// for every beat), so before the tile's hold is known.
  int64_t beatTaken(const TimingModel& m, int port, size_t i, int64_t k) const override;
  /// Link time of out beat b (not the last) of out tile j; kUnknown while not known.
  int64_t outBeat(const TimingModel& m, size_t j, int64_t b) const;
  /// Earliest link time out beat b of out tile j (b may be -1: the tile before) leaves as
  /// far as the next units' FIFOs go: the cycle after they made room; kUnknown while not known.
  int64_t outRoom(const TimingModel& m, size_t j, int64_t b) const;
  bool streams(int port) const override { return port == 0; }
  /// Beat k of an out tile leaves kHop + kOutHop after the in tile's beat k.
  int64_t beatVisible(const TimingModel& m, size_t j, int64_t k) const override;
};

/// sg_cu.sv func merge: EagerMerge(b 0) of two inputs in a given order (cu_merge.cpp). Each
/// out tile is a whole input tile, taken the cycle after the previous one's last beat at the
/// earliest; STOPs are dropped as they come; the DONEs leave together. arrivalOrder()
/// replays the RTL's arbitration on the cycles the tiles reached the unit.
struct CuMerge : Unit {
  std::vector<std::pair<int, size_t>> from;  ///< per out tile: input port and tile (DONE: port 0's DONE)
  size_t nextOut = 0, nextIn[2] = {0, 0}, nextOffer = 0, nextHold = 0, nextStopHold[2] = {0, 0};

  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t k, int64_t start) override;
  bool streams(int) const override { return true; }
  /// A beat passes as it comes from its input tile (a load's bursts through a Partition).
  int64_t beatVisible(const TimingModel& m, size_t k, int64_t b) const override;
  /// The input of each DATA out tile as the RTL would choose them given the tiles' arrival
  /// cycles in this run: while no tile is open, in0's if it has arrived, else in1's. With
  /// `partial` (a deadlocked run): a tile not yet taken arrives at its offer, and the
  /// decisions stop at the first one whose cycles are not known.
  std::vector<int> arrivalOrder(const TimingModel& m, bool partial = false) const;
  /// `partial` decisions that differ from the order this unit was built with (`from`).
  bool contradicts(const std::vector<int>& decided) const;
};

/// sg_cu.sv func select (Map(select)): `initial` one-beat out tiles from the first RUN
/// cycle, then one per input DATA tile, once its last beat is taken (the earlier beats and
/// STOPs are dropped without waiting for the output); the DONE passes (cu_select.cpp).
struct CuSelect : Unit {
  int64_t initial = 0;         ///< initial tokens c (field n)
  std::vector<int64_t> outOf;  ///< per in tile: its out tile, or -1 (a dropped STOP)
  std::vector<size_t> inOf;    ///< per out tile: its in tile (SIZE_MAX for an initial one)
  size_t nextAccept = 0, nextOffer = 0, nextHold = 0;

  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t j, int64_t start) override;
  bool streams(int) const override { return true; }
  bool dropsBeforeLast(int) const override { return true; }
};

/// sg_cu.sv accum / retile and sg_mu.sv buffer mode: tiles collect into one of two banks; a
/// closing tile makes the bank drain as `outCount[k]` out tiles at `rate` cycles per beat
/// (banked.cpp).
struct Banked : Unit {
  std::vector<int> group;          ///< per in tile: its group (bank use)
  std::vector<size_t> firstOut;    ///< per group: first out tile
  std::vector<size_t> outCount;    ///< per group: number of out tiles
  std::vector<size_t> closer;      ///< per group: closing in tile
  std::vector<int> outGroupOf;     ///< per out tile: its group
  int64_t rate = 1;                ///< cycles per beat (an MU: muCyclesPerBeat)
  int64_t inRateExtra = 0;         ///< more cycles per input beat (accum rescale, one-beat tiles: 1)
  size_t nextAccept = 0, nextOffer = 0;

  int64_t groupFree(TimingModel& m, int k) const;
  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t i, int64_t start) override;
  int64_t inRate() const override { return rate + inRateExtra; }
};

/// sg_mu.sv keep: takes every input beat, `rate` cycles per beat, into its buffer and emits
/// nothing; finishes the cycle after it took DONE (mu_carry.cpp).
struct MuKeep : Unit {
  int64_t rate = 1;
  size_t nextAccept = 0;

  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel&, size_t, int64_t start) override { return start; }
  int64_t inRate() const override { return rate; }
};

/// sg_mu.sv replay: emits the kept beats from the start of its section, `rate` cycles per
/// beat, then DONE (mu_carry.cpp).
struct MuReplay : Unit {
  /// Cycle (from the section's start) the first kept beat can be taken: the unit's first
  /// RUN cycle reads it, its output register holds it one cycle later.
  static constexpr int64_t kReplayFirstOffer = 2;
  int64_t rate = 1;
  bool offered = false;

  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t i, int64_t start) override;
};

/// sg_route.sv (sg_mu route mode, data or meta output): takes every token row (in0) and
/// routing row (in1) one beat per cycle; the first output beat is valid 3 cycles after the
/// later DONE was taken, then one beat per cycle (mu_route.cpp).
struct MuRoute : Unit {
  size_t nextAccept[2] = {0, 0};
  bool offered = false;

  /// Earliest cycle tile i of port p may be taken besides the port's own order (kUnknown
  /// while not known yet); the route unit takes both inputs freely.
  virtual int64_t waitFor(TimingModel&, size_t /*p*/, size_t /*i*/) { return 0; }
  bool step(TimingModel& m) override;
  int64_t endFor(TimingModel& m, size_t i, int64_t start) override;
};

/// sg_combine.sv (sg_mu combine mode): meta entries (in1) taken one per cycle whenever they
/// come; the expert rows (in0) of entry n only from the cycle after entry n; output as
/// MuRoute (mu_combine.cpp).
struct MuCombine : MuRoute {
  std::vector<size_t> metaOf;  ///< per in0 tile: the in1 tile it waits for (SIZE_MAX: none)
  int64_t waitFor(TimingModel& m, size_t p, size_t i) override;
};

}  // namespace stepgen::timing
