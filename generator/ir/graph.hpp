#pragma once
// StepGraph: the STeP program IR (docs/step_semantics.md#operators). Plain data; loadGraph builds it,
// checkShapes returns the inferred stream types in a separate result.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/symexpr.hpp"
#include "support/diag.hpp"

namespace stepgen {

struct OpId { int v = -1; bool valid() const { return v >= 0; } };
struct StreamId { int v = -1; bool valid() const { return v >= 0; } };
inline bool operator==(OpId a, OpId b) { return a.v == b.v; }
inline bool operator==(StreamId a, StreamId b) { return a.v == b.v; }

/// STeP operators, spelled as in the paper. SelectGen (a selector source replaying routing
/// decisions from a trace, docs/step_semantics.md#selectgen) comes last.
enum class OpKind {
  LinearOffChipLoad, LinearOffChipStore, RandomOffChipLoad, RandomOffChipStore,
  Bufferize, Streamify, RepeatStatic, Broadcast, Map, Accum, Scan, FlatMap,
  Promote, Flatten, Reshape, Expand, Zip, Partition, Reassemble, EagerMerge, Parallelize,
  SelectGen, AddrGen
};
/// The paper's spelling of an operator, and its inverse (std::nullopt for an unknown name).
/// Both read the operator table (ir/op_table.cpp), which defines them.
const char* opKindName(OpKind k);
std::optional<OpKind> opKindFromName(const std::string& s);

/// A SelectGen's routing tensor as the fabric reads it (docs/graph_format.md): one 64-byte
/// row of kRoutingRowWords words per token, its k experts ascending in words 0..k-1 and
/// their router weights from word kRoutingWeightWord (so k <= 8).
constexpr int kRoutingRowWords = 16;
constexpr int kRoutingWeightWord = 8;

/// An attribute value as written in YAML: a scalar (kept as text) or a list, with location.
struct Attr {
  SourceLoc loc;
  std::string scalar;           ///< scalar text when list is empty and !isList
  bool isList = false;
  std::vector<Attr> list;
};

/// Element type of a stream.
struct ElemType {
  enum class Kind { Tile, Selector, Reference, Tuple };
  Kind kind = Kind::Tile;
  std::string dtype = "fp32";          ///< tile scalar type
  std::vector<SymExpr> tile;           ///< Tile: [rows, cols]; Reference: buffer stream shape
  std::vector<ElemType> parts;         ///< Tuple members
};

/// Type of a stream: shape [D_N..D_0] (outermost first, D_N counts tensors) and element type.
struct StreamType {
  std::vector<SymExpr> shape;
  ElemType elem;
  int rank() const { return int(shape.size()) - 1; }  ///< highest stop level S_rank
};

/// An off-chip tensor the graph reads (role input), writes (role output) or reads and
/// writes (role state: a KV cache, given as an input and returned as an output; its loads
/// run after its stores, in a later section on a fabric), or a scratch tensor the section
/// pass adds to carry a stream between sections (map/sections.hpp).
struct Tensor {
  std::string name;
  SourceLoc loc;
  std::vector<SymExpr> shape;  ///< [rows, cols]
  std::string dtype = "fp32";
  bool isOutput = false;       ///< role output or state: a result of the graph
  bool isState = false;        ///< role state: also an input (its contents before the graph runs)
  /// True if the graph reads the tensor's contents as given (role input or state).
  bool isInput() const { return (!isOutput || isState) && !isScratch; }
  bool isScratch = false;      ///< written and read back by the fabric, neither input nor output
  int64_t baseAddress = 0;     ///< bytes; assigned by the loader in declaration order
};

struct Stream {
  std::string name;
  SourceLoc loc;                    ///< where declared or first used
  std::optional<StreamType> declared;  ///< type written in the YAML, if any
  OpId producer;
  std::vector<OpId> consumers;
};

struct Op {
  std::string name;
  OpKind kind;
  SourceLoc loc;
  std::vector<StreamId> inputs;
  std::vector<StreamId> outputs;
  std::map<std::string, Attr> attrs;  ///< op-specific attributes (fn, b, tile, iter, ...)
};

/// The whole graph: ops and streams indexed by OpId / StreamId, in file order.
struct StepGraph {
  std::string name;
  SourceLoc loc;
  SymEnv symbols;                   ///< static symbol values, including the schedule
  std::map<std::string, SourceLoc> symbolLocs;
  std::vector<Tensor> tensors;
  std::vector<Op> ops;
  std::vector<Stream> streams;

  const Op& op(OpId id) const { return ops.at(id.v); }
  const Stream& stream(StreamId id) const { return streams.at(id.v); }
  /// True if `id` names a stream of this graph (graphs built in memory may hold bad ids).
  bool hasStream(StreamId id) const { return id.v >= 0 && size_t(id.v) < streams.size(); }
  std::optional<StreamId> findStream(const std::string& name) const;
  std::optional<int> findTensor(const std::string& name) const;
};

/// Reads a graph YAML (schema: docs/graph_format.md). Errors (DiagError): G-1xx syntax,
/// unknown keys, unknown operator, dangling or doubly consumed stream (without Broadcast).
StepGraph loadGraph(const std::string& path);

}  // namespace stepgen
