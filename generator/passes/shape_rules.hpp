#pragma once
// Internal to the shape check (passes/shape_*.cpp): the Checker that infers stream types, its
// shared helpers, attribute readers and per-operator rules. Not for use outside passes/.
//
// Where its members live:
//  - shape_check.cpp: the driver (run, the rule dispatch inferOp, diagnostics, labels,
//    arity, type comparison, setOutput) and the public helpers of shape_check.hpp;
//  - shape_attrs.cpp: the attribute readers (symbolic expressions, S-202..S-204);
//  - shape_rules_static.cpp: the rules of the static operators, the tensor-walk check and
//    the Accum/Scan head;
//  - shape_rules_dynamic.cpp: the rules of the routing and dynamic shape operators.
// Dependency order and cycles: passes/graph_order.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "passes/graph_order.hpp"
#include "passes/shape_check.hpp"

namespace stepgen::shape_detail {

/// Yes if both are Yes, No if one is No, else Unknown.
inline Proof combine(Proof a, Proof b) {
  if (a == Proof::No || b == Proof::No) return Proof::No;
  if (a == Proof::Unknown || b == Proof::Unknown) return Proof::Unknown;
  return Proof::Yes;
}

/// How a failed comparison reads in a message.
inline const char* differWord(Proof p) { return p == Proof::No ? "differ" : "cannot be proven equal"; }

inline bool isTile2(const ElemType& e) { return e.kind == ElemType::Kind::Tile && e.tile.size() == 2; }

/// A 2-D tile element of `dtype`.
inline ElemType tileElem(const std::string& dtype, const std::vector<SymExpr>& tile) {
  ElemType e;
  e.kind = ElemType::Kind::Tile;
  e.dtype = dtype;
  e.tile = tile;
  return e;
}

/// The element of two zipped streams (Zip, a Map of two inputs).
inline ElemType tupleElem(const ElemType& a, const ElemType& b) {
  ElemType e;
  e.kind = ElemType::Kind::Tuple;
  e.parts = {a, b};
  return e;
}

/// A k-of-n selector element.
inline ElemType selectorElem(const SymExpr& n, const SymExpr& k) {
  ElemType e;
  e.kind = ElemType::Kind::Selector;
  e.tile = {n, k};
  return e;
}

/// The element of boolean streams: a 1 x 1 tile of dtype "bool".
inline ElemType boolElem() { return tileElem("bool", {SymExpr::constant(1), SymExpr::constant(1)}); }

/// The inner b dims D_{b-1}..D_0 of t's shape, and the outer ones D_N..D_b.
inline std::vector<SymExpr> innerDims(const StreamType& t, int64_t b) {
  return std::vector<SymExpr>(t.shape.end() - long(b), t.shape.end());
}
inline std::vector<SymExpr> outerDims(const StreamType& t, int64_t b) {
  return std::vector<SymExpr>(t.shape.begin(), t.shape.end() - long(b));
}

/// A linear walk over a tensor's tiles: iter (outermost first) and one stride per level.
struct WalkSpec {
  std::vector<SymExpr> iter;
  std::vector<std::pair<SymExpr, SymExpr>> strides;  // (tile-row step, tile-col step) per level
  std::pair<SymExpr, SymExpr> origin{SymExpr::constant(0), SymExpr::constant(0)};  // the first tile
};

/// What tileReduceHead read: the function, b and the input type.
struct TileReduce {
  std::string fn;
  int64_t b;
  StreamType in;
};

/// Infers and checks the types of one graph. Every check reports through error() and
/// returns nullopt/false/nullptr on failure; a rule whose inputs have no type (an earlier
/// error) returns silently.
class Checker {
 public:
  explicit Checker(const StepGraph& g);
  /// Runs every rule in dependency order; throws one DiagError with every error found.
  ShapeResult run();

 private:
  const StepGraph& g_;
  SymConstraints cons_;
  std::vector<Diagnostic> diags_;
  std::vector<std::optional<StreamType>> types_;
  std::vector<bool> fedBack_;  ///< per stream: downstream of a feedback stream (its length is decided at run time)

  // ---------------------------------------------------------------- driver (shape_check.cpp)
  void inferOp(const Op& op);
  /// S-205 for one dependency cycle (a cycle without a feedback stream's initial tokens).
  void reportCycle(const OpCycle& c);
  /// Map(fn: select): the one-hot selector stream [F] (F decided at run time) of a feedback
  /// cycle; S-251 for a bad value / n / initial. Also gives a feedback stream its type
  /// before its consumers (which come first in the dependency order) are checked.
  std::optional<StreamType> selectType(const Op& op);
  bool validStream(StreamId s) const { return g_.hasStream(s); }
  void error(const std::string& id, const SourceLoc& loc, const std::string& msg, std::vector<DiagNote> notes = {});
  /// "Map(add) 'm'": kind, fn for operators with an fn key, and name.
  std::string opLabel(const Op& op) const;
  std::string streamName(StreamId s) const;
  /// "stream 'x' [B/tb] x tile [tb, D]" (the type when known).
  std::string streamDesc(StreamId s) const;
  /// S-201 unless op has nin inputs and noutMin..noutMax outputs, all valid.
  bool arity(const Op& op, size_t nin, size_t noutMin, size_t noutMax);
  /// arity() with the counts of the operator table (ops with a fixed input count).
  bool arity(const Op& op);
  /// S-221 unless v (attribute `key`) is in [0, maxValue].
  bool checkRankParam(const Op& op, const std::string& key, int64_t v, int64_t maxValue, StreamId in);
  /// Types of all inputs, or nullopt if one is unknown (an earlier error; stay silent).
  std::optional<std::vector<StreamType>> inputTypes(const Op& op);
  Proof dimEq(const SymExpr& a, const SymExpr& b) const { return provablyEqual(a, b, cons_); }
  Proof dimsEq(const std::vector<SymExpr>& a, const std::vector<SymExpr>& b) const;
  Proof elemEq(const ElemType& a, const ElemType& b) const;
  Proof typeEq(const StreamType& a, const StreamType& b) const { return combine(dimsEq(a.shape, b.shape), elemEq(a.elem, b.elem)); }
  /// A fresh dynamic-regular symbol (lower bound 0).
  SymExpr freshDim(const std::string& name);
  /// Records the type of output s; S-220 if it differs from the declared type.
  void setOutput(const Op& op, StreamId s, StreamType t);

  // ---------------------------------------------------------------- attributes (shape_attrs.cpp)
  // Required attributes report S-202 when absent; malformed ones S-203.
  const Attr* attr(const Op& op, const std::string& key) const;  ///< nullptr when absent
  /// Where attribute `key` is written (the op's location if absent or unlocated).
  SourceLoc attrLoc(const Op& op, const std::string& key) const;
  const Attr* requireAttr(const Op& op, const std::string& key);
  std::optional<SymExpr> parseExpr(const Op& op, const std::string& key, const Attr& a);
  std::optional<std::string> stringAttr(const Op& op, const std::string& key);  ///< a name
  std::optional<SymExpr> exprAttr(const Op& op, const std::string& key);         ///< a symbolic scalar
  /// An integer attribute (b, lo, hi); expressions of bound symbols are accepted.
  std::optional<int64_t> intAttr(const Op& op, const std::string& key);
  /// A list of expressions with wantSize entries (0: any number but none).
  std::optional<std::vector<SymExpr>> exprListAttr(const Op& op, const std::string& key, size_t wantSize = 0);
  /// `strides`: one [dr, dc] pair per iter level (S-232 when the counts differ).
  std::optional<std::vector<std::pair<SymExpr, SymExpr>>> stridesAttr(const Op& op, size_t levels);
  std::optional<WalkSpec> walkAttrs(const Op& op);  ///< iter and strides
  const Tensor* tensorAttr(const Op& op);           ///< S-204 for an unknown tensor
  /// An optional true/false attribute.
  std::optional<bool> boolAttr(const Op& op, const std::string& key, bool dflt);
  /// The number of routed streams `n`: a static integer >= 1 that must equal `have` (S-201).
  std::optional<int64_t> countAttr(const Op& op, const std::string& what, size_t have);

  // ---------------------------------------------------------------- static rules (shape_rules_static.cpp)
  /// S-230 unless the tensor is divisible by the tile, S-231 if the walk leaves it.
  void checkTensorWalk(const Op& op, const Tensor& t, const std::vector<SymExpr>& tile, const WalkSpec& w);
  /// S-210 unless all inputs have the same shape (Zip, a Map of two inputs).
  bool sameShapes(const Op& op, const std::vector<StreamType>& in);
  /// The head of Accum and Scan: arity, fn one of `fns` (S-203), b within the rank, a tile input.
  std::optional<TileReduce> tileReduceHead(const Op& op, const std::vector<std::string>& fns);
  void inferLoad(const Op& op);
  void inferStore(const Op& op);
  void inferBufferize(const Op& op);
  void inferStreamify(const Op& op);
  void inferRepeat(const Op& op);
  void inferBroadcast(const Op& op);
  void inferZip(const Op& op);
  void inferMap(const Op& op);
  void inferAccum(const Op& op);
  void inferPromote(const Op& op);
  void inferFlatten(const Op& op);

  // ---------------------------------------------------------------- dynamic rules (shape_rules_dynamic.cpp)
  /// S-240 unless input s carries selectors, over n outputs when n is given.
  bool checkSelector(const Op& op, StreamId s, const StreamType& t, std::optional<int64_t> n, const char* role);
  /// Tiles that differ only in a dynamic row count (EagerMerge of experts' rows).
  bool dynamicRowsOnly(const ElemType& a, const ElemType& x);
  /// S-242 unless inputs 0..count-1 have the same rank, inner-b chunk and element.
  bool sameChunks(const Op& op, const std::vector<StreamType>& in, size_t count, int64_t b, bool* raggedRows = nullptr);
  void inferSelectGen(const Op& op);
  void inferTopk(const Op& op, const std::string& fn);
  /// The address stream of a run load (`count`) or a random store (`index`) carries meta
  /// rows [1, c] and each named word lies in them; else S-248 (at `in` or the word's key).
  bool checkMetaRows(const Op& op, const StreamType& addr, const char* with,
                     const std::vector<std::pair<const char*, int64_t>>& words);
  void inferAddrGen(const Op& op);
  void inferPartition(const Op& op);
  void inferReassemble(const Op& op);
  void inferEagerMerge(const Op& op);
  void inferReshape(const Op& op);
  void inferExpand(const Op& op);
  void inferScan(const Op& op);
  void inferFlatMap(const Op& op);
  void inferParallelize(const Op& op);
  void inferRandomLoad(const Op& op);
  void inferRunLoad(const Op& op, const Tensor& t, const std::vector<SymExpr>& tile, const StreamType& addr);
  void inferRandomStore(const Op& op);
};

}  // namespace stepgen::shape_detail
