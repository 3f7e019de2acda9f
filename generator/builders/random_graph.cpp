// buildRandomGraph: the graph is drawn step by step from a pool of open streams (produced,
// not yet consumed); every draw comes from one std::mt19937 in a fixed order, so a seed
// always gives the same text.
#include "builders/random_graph.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <random>
#include <vector>

namespace stepgen {

namespace {

// An open stream: [N] or [N, M] (twoLevel) of [rows, cols] tiles.
// A Partition's output is ragged: its count is data-dependent, so it zips with nothing but
// itself and meets no weight stream of [N] tiles. It takes one Map at most (then it is
// sealed: only its store reads it), so that a Partition and its readers, which cannot be cut
// into two sections (a ragged stream is not carried), need at most 4 compute units.
struct Open {
  std::string name;
  int64_t rows = 1, cols = 16;
  bool twoLevel = false, ragged = false, sealed = false;
  std::string n = "N";  ///< the outermost dim: N, or a Parallelize output's count
  bool sameType(const Open& o) const {
    return !ragged && !o.ragged && rows == o.rows && cols == o.cols && twoLevel == o.twoLevel && n == o.n;
  }
};

class Builder {
 public:
  Builder(uint32_t seed, const RandomGraphLimits& l) : seed_(seed), rng_(seed), lim_(l) {}

  RandomGraph run() {
    n_ = pick(1, lim_.maxOuter);
    m_ = pick(1, lim_.maxOuter);
    const int loads = int(pick(1, lim_.maxLoads));
    for (int i = 0; i < loads && agLeft() > 1; ++i) load();
    const int steps = lim_.maxCu > 0 ? int(pick(1, lim_.maxCu)) : 0;
    for (int s = 0; s < steps && cu_ < lim_.maxCu; ++s) step();
    for (const Open& o : open_) store(o);
    RandomGraph g;
    g.ops = ops_;
    g.arrivalOrder = merged_;
    g.files = files_;
    g.yaml = fmt::format("# random graph (buildRandomGraph) of seed {}, limits: ag {}, cu {}, loads {}, outer {}, rows {}, cols {}\n"
                         "stepgraph: random_{}\n",
                         seed_, lim_.maxAg, lim_.maxCu, lim_.maxLoads, lim_.maxOuter, lim_.maxRows, lim_.maxCols, seed_) +
             fmt::format("symbols: {{N: {}, M: {}}}\ntensors:\n", n_, m_) + tensors_ + "ops:\n" + body_;
    return g;
  }

 private:
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  int64_t pow2Upto(int64_t lo, int64_t hi) {
    std::vector<int64_t> v;
    for (int64_t x = lo; x <= hi; x *= 2) v.push_back(x);
    return v[size_t(pick(0, int64_t(v.size()) - 1))];
  }
  // Address generators still free once every open stream has its store.
  int agLeft() const { return int(lim_.maxAg) - ag_ - int(open_.size()); }
  // The route cluster comes once per graph and needs three address generators.
  bool canRoute() const { return !routed_ && agLeft() >= 3; }
  std::string fresh(const char* stem) { return fmt::format("{}{}", stem, names_++); }
  void op(const std::string& text) { body_ += "  - {" + text + "}\n", ++ops_; }
  static std::string outer(const Open& o) { return o.twoLevel ? fmt::format("[{}, M]", o.n) : fmt::format("[{}]", o.n); }
  static std::string tensorShape(const Open& o) {
    return o.twoLevel ? fmt::format("[{}*{}, M*{}]", o.n, o.rows, o.cols) : fmt::format("[{}*{}, {}]", o.n, o.rows, o.cols);
  }
  static std::string walk(bool two) { return two ? "[[1, 0], [0, 1]]" : "[[1, 0]]"; }

  Open take(size_t i) {
    Open o = open_[i];
    open_.erase(open_.begin() + std::ptrdiff_t(i));
    return o;
  }
  // A random open stream that is not sealed (step() checks there is one).
  Open takeAny() {
    std::vector<size_t> free;
    for (size_t i = 0; i < open_.size(); ++i)
      if (!open_[i].sealed) free.push_back(i);
    return take(free[size_t(pick(0, int64_t(free.size()) - 1))]);
  }

  // A new input tensor x<i> of o's shape, loaded into stream o.name as o's tiles over `iter`
  // (default: o's own outer dims, walked in order); one address generator.
  void loadInput(const Open& o, std::string iter = "", std::string strides = "") {
    const std::string t = fmt::format("x{}", inputs_++);
    tensors_ += fmt::format("  {}: {{shape: {}, role: input}}\n", t, tensorShape(o));
    op(fmt::format("name: load_{}, op: LinearOffChipLoad, tensor: {}, tile: [{}, {}], iter: {}, strides: {}, out: {}", t,
                   t, o.rows, o.cols, iter.empty() ? outer(o) : iter, strides.empty() ? walk(o.twoLevel) : strides, o.name));
    ++ag_;
  }

  void load() {
    Open o{fresh("s"), pow2Upto(1, lim_.maxRows), 16 * pow2Upto(1, lim_.maxCols / 16), pick(0, 1) == 1};
    loadInput(o);
    open_.push_back(o);
  }

  void store(const Open& o) {
    const std::string t = fmt::format("y{}", outputs_++);
    tensors_ += fmt::format("  {}: {{shape: {}, role: output}}\n", t, tensorShape(o));
    op(fmt::format("name: store_{}, op: LinearOffChipStore, in: {}, tensor: {}, tile: [{}, {}], iter: {}, strides: {}",
                   t, o.name, t, o.rows, o.cols, outer(o), walk(o.twoLevel)));
    ++ag_;
  }

  void unary(const Open& in, const char* fn) {
    Open o = in;
    o.name = fresh("s");
    o.sealed = in.ragged;
    op(fmt::format("name: {0}_{1}, op: Map, fn: {0}, in: {2}, out: {1}", fn, o.name, in.name));
    ++cu_;
    open_.push_back(o);
  }

  // Scan(fn, b 1) of an [N, M] stream: a running add or max over each group of M tiles,
  // the same shape.
  void scan(const Open& in) {
    static const char* const kFns[] = {"add", "max", "max_exclusive"};
    Open o = in;
    o.name = fresh("s");
    op(fmt::format("name: scan_{0}, op: Scan, fn: {1}, b: 1, in: {2}, out: {0}", o.name, kFns[pick(0, 2)], in.name));
    ++cu_;
    open_.push_back(o);
  }

  // Parallelize of an [N] stream (N >= 2) into two, a compute unit each: output 0 gets the
  // even tiles, [ceil(N/2)], output 1 the odd ones, [floor(N/2)].
  void parallelize(const Open& in) {
    Open o0 = in, o1 = in;
    o0.name = fresh("q"), o1.name = fresh("q");
    o0.n = std::to_string((n_ + 1) / 2), o1.n = std::to_string(n_ / 2);
    op(fmt::format("name: par_{}, op: Parallelize, in: {}, out: [{}, {}]", o0.name, in.name, o0.name, o1.name));
    cu_ += 2;
    open_.push_back(o0);
    open_.push_back(o1);
  }

  // Expand(b 1) of a new input's [N, 1] stream of [R, C] tiles to the stops of `ref`, an
  // [N, M] stream (only its stops are read): every tile M times.
  void expand(const Open& ref) {
    const Open d{fresh("s"), pow2Upto(1, lim_.maxRows), 16 * pow2Upto(1, lim_.maxCols / 16), false};
    loadInput(d, "[N, 1]", "[[1, 0], [0, 0]]");
    Open o = ref;
    o.name = fresh("s"), o.rows = d.rows, o.cols = d.cols;
    op(fmt::format("name: expand_{0}, op: Expand, b: 1, in: [{1}, {2}], out: {0}", o.name, d.name, ref.name));
    ++cu_;
    open_.push_back(o);
  }

  // a and a second open stream of its type, or, if none is open, a Broadcast of a into both.
  std::pair<Open, Open> pairWith(const Open& a) {
    for (size_t i = 0; i < open_.size(); ++i)
      if (open_[i].sameType(a)) return {a, take(i)};
    const std::string b1 = fresh("b"), b2 = fresh("b");
    op(fmt::format("name: bcast_{}, op: Broadcast, in: {}, out: [{}, {}]", b1, a.name, b1, b2));
    Open x = a, y = a;
    x.name = b1, y.name = b2;
    return {x, y};
  }

  // Zip(a, b): the name of the tuple stream.
  std::string zip(const Open& a, const Open& b) {
    const std::string z = fresh("z");
    op(fmt::format("name: zip_{}, op: Zip, in: [{}, {}], out: {}", z, a.name, b.name, z));
    return z;
  }

  void binary(const Open& a, const Open& b, const char* fn) {
    const std::string z = zip(a, b);
    Open o = a;
    o.name = fresh("s");
    o.sealed = a.ragged;
    op(fmt::format("name: {0}_{1}, op: Map, fn: {0}, in: {2}, out: {1}", fn, o.name, z));
    ++cu_;
    open_.push_back(o);
  }

  // Zip(a, w) + Map(matmul) with a loaded weight tile w [a.cols, c2] (transposed: Map(matmul_t)
  // with w [c2, a.cols]), the same tile for every element; the matmul's output stream (not
  // added to the open pool).
  Open matmul(const Open& a, int64_t c2, bool transposed = false) {
    const std::string w = fmt::format("w{}", weights_++), ws = fresh("s"), z = fresh("z");
    const int64_t wr = transposed ? c2 : a.cols, wc = transposed ? a.cols : c2;
    tensors_ += fmt::format("  {}: {{shape: [{}, {}], role: input}}\n", w, wr, wc);
    op(fmt::format("name: load_{}, op: LinearOffChipLoad, tensor: {}, tile: [{}, {}], iter: {}, strides: {}, out: {}", w,
                   w, wr, wc, outer(a), a.twoLevel ? "[[0, 0], [0, 0]]" : "[[0, 0]]", ws));
    ++ag_;
    op(fmt::format("name: zip_{}, op: Zip, in: [{}, {}], out: {}", z, a.name, ws, z));
    Open o = a;
    o.name = fresh("s"), o.cols = c2;
    op(fmt::format("name: matmul_{}, op: Map, fn: {}, in: {}, out: {}", o.name, transposed ? "matmul_t" : "matmul", z, o.name));
    ++cu_;
    return o;
  }

  // A loaded stream of a's type with [a.rows, 16] tiles: scale_rows's row scalars (word 0
  // of each row; docs/graph_format.md).
  Open loadScalars(const Open& a) {
    Open o = a;
    o.name = fresh("s"), o.cols = 16;
    loadInput(o);
    return o;
  }

  // A SelectGen `sel` (top-k of n) over the routing trace `csv` (token,expert_0..): the
  // trace file random_<seed>_route<k>.csv, its routing tensor r<k>, one address generator.
  void selectGen(const std::string& sel, const std::string& csv, int64_t n, int64_t k) {
    const std::string r = fmt::format("r{}", routes_), trace = fmt::format("random_{}_route{}.csv", seed_, routes_++);
    files_.emplace_back(trace, csv);
    tensors_ += fmt::format("  {}: {{shape: [N, 16], role: input}}\n", r);
    op(fmt::format("name: route_{}, op: SelectGen, trace: {}, tensor: {}, n: {}, k: {}, iter: [N], out: {}", sel, trace, r, n, k,
                   sel));
    ++ag_;
  }

  // Partition(b 0) of `a` into two, each row to the output that reported itself free first:
  // a Broadcast of each output feeds a Map(select) naming it, after 1 or 2 initial tokens
  // (its credits), and the EagerMerge of the two signals is the Partition's selector. 5
  // compute units; which rows go where is decided by the timing, so the outputs are in
  // arrival order (arrivalOrder).
  void dispatch(const Open& a) {
    const std::string free = fresh("free"), p0 = fresh("p"), p1 = fresh("p");
    op(fmt::format("name: part_{}, op: Partition, in: [{}, {}], n: 2, b: 0, out: [{}, {}]", p0, a.name, free, p0, p1));
    cu_ += 2;
    std::string signals[2];
    for (int r = 0; r < 2; ++r) {
      const std::string p = r ? p1 : p0, data = fresh("b"), tap = fresh("b");
      signals[r] = fresh("f");
      op(fmt::format("name: bcast_{}, op: Broadcast, in: {}, out: [{}, {}]", data, p, data, tap));
      op(fmt::format("name: select_{}, op: Map, fn: select, value: {}, n: 2, initial: {}, in: {}, out: {}", signals[r], r,
                     pick(1, 2), tap, signals[r]));
      ++cu_;
      Open o = a;
      o.name = data, o.ragged = true;
      open_.push_back(o);
    }
    op(fmt::format("name: merge_{0}, op: EagerMerge, b: 0, in: [{1}, {2}], out: {0}", free, signals[0], signals[1]));
    ++cu_;
    merged_ = true;
  }

  // The MoE dispatch on a route-mode memory unit (map/clusters.cpp, route cluster): N token
  // rows [1, C] of a new input tensor, each to k of n experts by a random trace; expert e's
  // rows are padded to whole tiles of tb rows (Reshape pad), retiled and merged in expert
  // order, and the merged rows are stored (their count is fixed by the trace). Three
  // address generators (the load, the SelectGen, the store), no compute unit. With
  // `combine`, three times in four (a compute unit and a fourth address generator left), the
  // layer's back instead: combineRows.
  void routeRows() {
    const Open a{fresh("s"), 1, 16 * pow2Upto(1, lim_.maxCols / 16), false};
    loadInput(a);
    const int64_t n = pick(2, 4), k = pick(1, std::min<int64_t>(2, n)), tb = pow2Upto(1, 4);
    const bool back = lim_.combine && agLeft() >= 3 && cu_ < lim_.maxCu && pick(0, 3) != 0;
    std::string csv = "token";
    for (int64_t j = 0; j < k; ++j) csv += fmt::format(",expert_{}", j);
    csv += "\n";
    std::vector<int64_t> count(size_t(n), 0);
    for (int64_t t = 0; t < n_; ++t) {
      std::vector<int64_t> experts(static_cast<size_t>(n));
      for (int64_t e = 0; e < n; ++e) experts[size_t(e)] = e;
      std::shuffle(experts.begin(), experts.end(), rng_);
      csv += fmt::format("{}", t);
      for (int64_t j = 0; j < k; ++j) csv += fmt::format(",{}", experts[size_t(j)]), ++count[size_t(experts[size_t(j)])];
      csv += "\n";
    }
    int64_t rows = 0;
    for (int64_t c : count) rows += (c + tb - 1) / tb * tb;
    const std::string sel = fresh("sel"), merged = fresh("m");
    selectGen(sel, csv, n, k);
    std::string selPart = sel, selBack;
    if (back) {
      selPart = fresh("sel"), selBack = fresh("sel");
      op(fmt::format("name: bcast_{}, op: Broadcast, in: {}, out: [{}, {}]", selPart, sel, selPart, selBack));
    }
    std::vector<std::string> parts, tiles, pads;
    for (int64_t e = 0; e < n; ++e) parts.push_back(fresh("p"));
    op(fmt::format("name: part_{}, op: Partition, in: [{}, {}], n: {}, b: 0, out: [{}]", parts[0], a.name, selPart, n,
                   fmt::join(parts, ", ")));
    for (const std::string& p : parts) {
      const std::string g = fresh("g"), t = fresh("t");
      // With the back, the "is padding" flags go on to the combine cluster's filter_rows.
      const std::string pg = back ? fresh("g") : "", pt = back ? fresh("t") : "";
      op(fmt::format("name: reshape_{}, op: Reshape, chunk: {}, b: 0, pad: true, in: {}, out: {}", g, tb, p,
                     back ? fmt::format("[{}, {}]", g, pg) : g));
      if (back) {
        op(fmt::format("name: retile_{}, op: Accum, fn: retile, b: 1, in: {}, out: {}", pt, pg, pt));
        pads.push_back(pt);
      }
      op(fmt::format("name: retile_{}, op: Accum, fn: retile, b: 1, in: {}, out: {}", t, g, t));
      tiles.push_back(t);
    }
    routed_ = true;
    if (back) return combineRows(merged, tiles, pads, selBack, n, k, tb, a.cols);
    const std::string y = fmt::format("y{}", outputs_++);
    tensors_ += fmt::format("  {}: {{shape: [{}, {}], role: output}}\n", y, rows, a.cols);
    op(fmt::format("name: merge_{0}, op: EagerMerge, b: 0, in: [{1}], out: {0}", merged, fmt::join(tiles, ", ")));
    op(fmt::format("name: store_{}, op: LinearOffChipStore, in: {}, tensor: {}, tile: [1, {}], iter: [{}], strides: [[1, 0]]",
                   y, merged, y, a.cols, rows));
    ++ag_;  // the store
  }

  // The back of the MoE layer after routeRows's merge (the graph of `stepgen graph moe`, with
  // a bias add for the expert): the merged tiles [tb, C] and the merge's selector; each tile
  // gets its expert's bias tile of a new input b<i> [n*tb, C] added (AddrGen(tiles 1) +
  // RandomOffChipLoad by the selector on one address generator, Promote(b 0) so that the
  // tile stream meets the [., 1] bias stream, Zip, Map(add) on one compute unit, Flatten
  // back), then a combine cluster on a third route-mode memory unit (Partition by the
  // selector -> FlatMap(filter_rows, the padding flags) -> Flatten -> Reassemble by the
  // token selector) puts the rows back in token order: [N, k] rows [1, C], stored as y<i>
  // [N*k, C]. Row j of token t is x[t] + b[e*tb + i % tb] for its j-th expert e in
  // ascending order, t being the i-th token of e.
  void combineRows(const std::string& merged, const std::vector<std::string>& tiles, const std::vector<std::string>& pads,
                   const std::string& selBack, int64_t n, int64_t k, int64_t tb, int64_t cols) {
    const std::string selm = fresh("sel"), selw = fresh("sel"), selo = fresh("sel"), adr = fresh("a"), bt = fresh("s"),
                      xp = fresh("s"), z = fresh("z"), o = fresh("s"), of = fresh("s"), yk = fresh("s");
    const std::string b = fmt::format("b{}", weights_++), y = fmt::format("y{}", outputs_++);
    tensors_ += fmt::format("  {}: {{shape: [{}, {}], role: input}}\n", b, n * tb, cols);
    tensors_ += fmt::format("  {}: {{shape: [N*{}, {}], role: output}}\n", y, k, cols);
    op(fmt::format("name: merge_{0}, op: EagerMerge, b: 0, in: [{1}], out: [{0}, {2}]", merged, fmt::join(tiles, ", "), selm));
    op(fmt::format("name: bcast_{}, op: Broadcast, in: {}, out: [{}, {}]", selw, selm, selw, selo));
    op(fmt::format("name: addr_{}, op: AddrGen, tiles: 1, in: {}, out: {}", adr, selw, adr));
    op(fmt::format("name: load_{}, op: RandomOffChipLoad, tensor: {}, tile: [{}, {}], in: {}, out: {}", b, b, tb, cols, adr, bt));
    ++ag_;
    op(fmt::format("name: promote_{0}, op: Promote, b: 0, in: {1}, out: {0}", xp, merged));
    op(fmt::format("name: zip_{}, op: Zip, in: [{}, {}], out: {}", z, xp, bt, z));
    op(fmt::format("name: add_{0}, op: Map, fn: add, in: {1}, out: {0}", o, z));
    ++cu_;
    op(fmt::format("name: flat_{0}, op: Flatten, lo: 0, hi: 1, in: {1}, out: {0}", of, o));
    std::vector<std::string> parts, flat;
    for (int64_t e = 0; e < n; ++e) parts.push_back(fresh("p"));
    op(fmt::format("name: part_{}, op: Partition, in: [{}, {}], n: {}, b: 0, out: [{}]", parts[0], of, selo, n,
                   fmt::join(parts, ", ")));
    for (size_t e = 0; e < parts.size(); ++e) {
      const std::string r = fresh("s"), f = fresh("s");
      op(fmt::format("name: rows_{}, op: FlatMap, fn: filter_rows, b: 1, in: [{}, {}], out: {}", r, parts[e], pads[e], r));
      op(fmt::format("name: flat_{0}, op: Flatten, lo: 0, hi: 1, in: {1}, out: {0}", f, r));
      flat.push_back(f);
    }
    op(fmt::format("name: reassemble_{}, op: Reassemble, in: [{}, {}], n: {}, b: 0, out: {}", yk, fmt::join(flat, ", "), selBack,
                   n, yk));
    op(fmt::format("name: store_{}, op: LinearOffChipStore, in: {}, tensor: {}, tile: [1, {}], iter: [N, {}], strides: [[{}, 0], [1, 0]]",
                   y, yk, y, cols, k, k));
    ++ag_;
  }

  void step() {
    if (std::all_of(open_.begin(), open_.end(), [](const Open& o) { return o.sealed; })) return;
    // Where the combine cluster fits, the route step comes first one draw in two: drawn only
    // as a Partition, it came in about one such graph in six.
    if (lim_.combine && canRoute() && pick(0, 1) == 0) return routeRows();
    switch (pick(0, lim_.partition ? 5 : 4)) {
      case 0: {
        Open a = takeAny();
        if (lim_.attention && pick(0, 1) == 0) {
          static const char* const kFns[] = {"exp", "recip", "rowmax", "rowsum"};
          return unary(a, kFns[pick(0, 3)]);
        }
        if (lim_.dynamic && a.twoLevel && pick(0, 1) == 0) return scan(a);
        if (lim_.dynamic && !a.twoLevel && !a.ragged && a.n == "N" && n_ >= 2 && lim_.maxCu - cu_ >= 2 && pick(0, 1) == 0)
          return parallelize(a);
        return unary(a, "silu");
      }
      case 1: {  // add, mul (or sub) of two streams of one type, or scale_rows by a loaded column
        static const char* const kFns[] = {"mul", "add", "sub", "scale_rows"};
        const char* fn = kFns[pick(0, lim_.dynamic ? 3 : 1)];
        Open a = takeAny();
        if (fn == kFns[3]) {
          if (a.ragged || agLeft() < 1) return unary(a, "silu");
          return binary(a, loadScalars(a), fn);
        }
        const auto [x, y] = pairWith(a);
        return binary(x, y, fn);
      }
      case 2: {  // matmul with a loaded weight tile [K, C2], the same tile for every element
        if (agLeft() < 1) return unary(takeAny(), "silu");
        Open a = takeAny();
        if (a.ragged) return unary(a, "silu");
        const int64_t c2 = 16 * pow2Upto(1, lim_.maxCols / 16);
        open_.push_back(matmul(a, c2, lim_.dynamic && pick(0, 1) == 0));
        return;
      }
      case 3: {  // a detour: a + matmul(a, w) with w [C, C]. The add takes a's beats in
                 // lockstep with the matmul's, which come only once the matmul has a's whole
                 // tile: where a tile outgrows the direct branch's FIFO, the Broadcast
                 // stalls and the graph deadlocks (as tests/data/graphs/deadlock.yaml).
        if (agLeft() < 1 || lim_.maxCu - cu_ < 2) return unary(takeAny(), "silu");
        Open a = takeAny();
        if (a.ragged) return unary(a, "silu");
        const std::string b1 = fresh("b"), b2 = fresh("b");
        op(fmt::format("name: bcast_{}, op: Broadcast, in: {}, out: [{}, {}]", b1, a.name, b1, b2));
        Open x = a, y = a;
        x.name = b1, y.name = b2;
        return binary(x, matmul(y, a.cols), "add");
      }
      case 5: {  // Partition(b 0) of an [N] stream into two, by a SelectGen over a random trace
        if (lim_.route && canRoute() && pick(0, 1) == 0) return routeRows();
        size_t i = 0;
        while (i < open_.size() && (open_[i].twoLevel || open_[i].ragged || open_[i].n != "N")) ++i;  // its trace has N tokens
        if (i == open_.size() || agLeft() < 2 || lim_.maxCu - cu_ < 2) return unary(takeAny(), "silu");
        const Open a = take(i);
        if (lim_.feedback && lim_.maxCu - cu_ >= 5 && pick(0, 1) == 0) return dispatch(a);
        const std::string sel = fresh("sel"), p0 = fresh("p"), p1 = fresh("p");
        std::string csv = "token,expert_0\n";
        for (int64_t t = 0; t < n_; ++t) csv += fmt::format("{},{}\n", t, pick(0, 1));
        selectGen(sel, csv, 2, 1);
        op(fmt::format("name: part_{}, op: Partition, in: [{}, {}], n: 2, b: 0, out: [{}, {}]", p0, a.name, sel, p0, p1));
        cu_ += 2;
        Open o0 = a, o1 = a;
        o0.name = p0, o1.name = p1, o0.ragged = o1.ragged = true;
        // With merge, two draws in three join the two outputs again in arrival order:
        // directly (how 1), or the second after a Map(silu) that delays it (how 2). The
        // Partition, the Map and the EagerMerge stay within 4 compute units, which one
        // section holds (a ragged stream is not carried).
        const int64_t how = lim_.merge ? pick(0, 2) : 0;
        if (how == 0 || lim_.maxCu - cu_ < how) {
          open_.push_back(o0);
          open_.push_back(o1);
          return;
        }
        if (how == 2) {
          open_.push_back(o1);
          unary(take(open_.size() - 1), "silu");
          o1 = take(open_.size() - 1);
        }
        Open m = o0;
        m.name = fresh("m"), m.sealed = true;
        op(fmt::format("name: merge_{0}, op: EagerMerge, b: 0, in: [{1}, {2}], out: {0}", m.name, o0.name, o1.name));
        ++cu_;
        merged_ = true;
        open_.push_back(m);
        return;
      }
      default: {  // Accum(add) over M of an [N, M] stream (with `attention`, or max or rescale_add;
                  // with `dynamic`, or an Expand to it)
        for (size_t i = 0; i < open_.size(); ++i)
          if (open_[i].twoLevel) {
            if (lim_.dynamic && agLeft() >= 1 && pick(0, 1) == 0) return expand(take(i));
            static const char* const kFns[] = {"add", "max", "rescale_add"};
            const char* fn = kFns[lim_.attention ? pick(0, 2) : 0];
            Open a = take(i);
            std::string in = a.name;
            if (fn == kFns[2]) {  // acc * s + x word by word: s a second stream of a's type
              const auto [x, scale] = pairWith(a);
              in = zip(x, scale);
            }
            Open o = a;
            o.name = fresh("s"), o.twoLevel = false;
            op(fmt::format("name: accum_{}, op: Accum, fn: {}, b: 1, in: {}, out: {}", o.name, fn, in, o.name));
            ++cu_;
            open_.push_back(o);
            return;
          }
        unary(takeAny(), "silu");
      }
    }
  }

  uint32_t seed_;
  std::mt19937 rng_;
  RandomGraphLimits lim_;
  int64_t n_ = 1, m_ = 1;
  std::vector<Open> open_;
  std::string tensors_, body_;
  bool merged_ = false, routed_ = false;
  int ag_ = 0, cu_ = 0, ops_ = 0, names_ = 0, inputs_ = 0, outputs_ = 0, weights_ = 0, routes_ = 0;
  std::vector<std::pair<std::string, std::string>> files_;
};

}  // namespace

RandomGraph buildRandomGraph(uint32_t seed, const RandomGraphLimits& limits) { return Builder(seed, limits).run(); }

ReducedGraph reduceRandomGraph(uint32_t seed, const RandomGraphLimits& start,
                               const std::function<bool(const RandomGraph&)>& fails) {
  const std::pair<int64_t RandomGraphLimits::*, int64_t> order[] = {
      {&RandomGraphLimits::maxCu, 0},    {&RandomGraphLimits::maxAg, 2},   {&RandomGraphLimits::maxLoads, 1},
      {&RandomGraphLimits::maxOuter, 1}, {&RandomGraphLimits::maxRows, 1}, {&RandomGraphLimits::maxCols, 16}};
  ReducedGraph r{start, buildRandomGraph(seed, start), 1};
  if (!fails(r.graph)) return r;
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& [field, lowest] : order) {
      const bool pow2 = field == &RandomGraphLimits::maxRows || field == &RandomGraphLimits::maxCols;
      for (int64_t v = lowest; v < r.limits.*field; v = pow2 ? v * 2 : v + 1) {
        RandomGraphLimits l = r.limits;
        l.*field = v;
        RandomGraph g = buildRandomGraph(seed, l);
        ++r.tries;
        if (fails(g)) {
          r.limits = l, r.graph = std::move(g), changed = true;
          break;
        }
      }
    }
  }
  return r;
}

}  // namespace stepgen
