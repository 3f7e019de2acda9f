#pragma once
// Shape check (docs/step_semantics.md#operators, docs/graph_format.md "Operators"): infers the
// StreamType of every stream of a StepGraph from its operators, in dependency order, and
// reports every shape error of the graph at once (ids S-201..S-299).
//
// Element types produced:
//  - Tile: tile = [rows, cols], dtype from the loaded tensor;
//  - Tuple (Zip): parts = {a, b};
//  - Reference (Bufferize): tile = the buffer's shape [D_{b-1}..D_0], parts = {the
//    element type of the buffered stream}.
//  - Selector (SelectGen, EagerMerge): tile = [n, k]: each element names at most k of n
//    outputs (k = 1: one-hot). Address streams of RandomOffChipLoad/Store are selectors.
//  - Boolean streams (Reshape's "is padding", RandomOffChipStore's acknowledgements):
//    Tile with dtype "bool" and tile [1, 1].
//
// Dynamic shapes (docs/step_semantics.md#symbolic-shapes): Partition output i gets a fresh outer dim
// T_<op>_<i> (a symbol with lower bound 0); EagerMerge's count is the sum of its inputs'
// chunk counts (a fresh T_<op> if one is ragged); Reassemble with a multi-hot selector and
// FlatMap(filter_rows) make ragged dims R_<op> (SymExpr::ragged).
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace stepgen {

/// Result of checkShapes: the inferred type of every stream.
struct ShapeResult {
  std::vector<StreamType> types;  ///< indexed by StreamId::v
};

/// Infers every stream's type (shape [D_N..D_0] and element) from the operators of `g`
/// (LinearOffChipLoad/Store, Bufferize, Streamify, RepeatStatic, Broadcast, Zip,
/// Map(matmul|silu|exp|recip|mul|add|sub), Accum(add|retile), Promote, Flatten; and the dynamic path:
/// SelectGen, Partition, Reassemble, EagerMerge, Reshape, Expand, Scan(add|max),
/// FlatMap(rows|filter_rows), Parallelize, RandomOffChipLoad/Store; docs/step_semantics.md#operators,
/// docs/graph_format.md) and checks it. Ops are processed in dependency order whatever their order in g.ops.
/// Symbolic dims are compared with provablyEqual/provablyDivides under g.symbols.
/// Throws one DiagError carrying every error found (ids listed in shape_check.cpp):
/// S-201 wrong number of inputs/outputs, S-202 missing attribute, S-203 malformed attribute,
/// S-204 unknown tensor, S-205 dependency cycle, S-206 stream without producer,
/// S-207 operator not supported, S-210 Map/Zip input shapes differ, S-211 element type not
/// accepted, S-212 matmul inner dims differ, S-213 mul/add tiles differ, S-215 Streamify of
/// a non-reference, S-220 declared stream type differs from the inferred one,
/// S-221 b/lo/hi negative or above the rank, S-230 tensor not divisible by the tile,
/// S-231 load/store walk leaves the tensor, S-232 strides do not match iter,
/// S-233 store input shape differs from iter, S-234 store input tile differs from `tile`,
/// S-240 selector/address stream of the wrong element type or n, S-241 Partition selector
/// shape differs from the data's outer dims, S-242 Reassemble/EagerMerge inputs differ,
/// S-243 Reshape chunk does not divide the dim, S-244 Reshape pad with b > 0, S-245 Expand
/// of a dim that is not 1, S-246 Expand data/reference rank or outer dims differ,
/// S-247 RandomOffChipStore address and data shapes differ. Rank parameters b of the
/// dynamic operators use S-221 like the static ones.
ShapeResult checkShapes(const StepGraph& g);

/// Renders a shape as "[B/tb, F/tf]".
std::string formatShape(const std::vector<SymExpr>& shape);
/// Renders an element type: "tile [tb, D]", "tile<bf16> [16, 16]", "(tile [a, b], tile [b, c])",
/// "ref [F/tf] of tile [tb, tf]", "selector 1-of-4" ("selector" when k/n are unknown).
std::string formatElemType(const ElemType& e);
/// Renders a stream type as "[B/tb, F/tf] x tile [tb, D]" (shape outermost first, docs/step_semantics.md#shapes).
std::string formatStreamType(const StreamType& t);

/// Value of a dimension under the symbol values `env`. Throws DiagError S-250 (no location)
/// when the dimension is not static: an unbound symbol, an inexact division, or ragged.
int64_t evalDim(const SymExpr& e, const SymEnv& env);

/// One past the last byte of tensor `t` of `g` (fp32, row-major from its base address).
/// Throws DiagError S-250 as evalDim.
int64_t tensorEndByte(const StepGraph& g, const Tensor& t);
/// The first 4 KiB-aligned byte after every tensor of `g`: the DRAM image size, and where
/// the section pass lays out scratch. Throws DiagError S-250 as evalDim.
int64_t tensorsEndPage(const StepGraph& g);

}  // namespace stepgen
