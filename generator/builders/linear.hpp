#pragma once
// buildLinearGraph: out = sum_i x_i W_i^T (+ res), a projection of a decoder layer (q, k, v,
// the attention output) as a STeP graph. The reduction dimension comes in K tiles; the
// output in column tiles, each stored as one row of `out`, so a projection writes its heads
// one row each ([B*J, C]: row b*J + j is output tile j of token b).
#include <cstdint>
#include <string>

namespace stepgen {

/// Sizes of one linear (elements; fp32 tensors, row-major; W stored [out, in] as PyTorch's).
struct LinearParams {
  int64_t rows = 1;       ///< B: tokens
  int64_t inputs = 1;     ///< n: input tensors x0 .. x{n-1}, each contributing kTiles K tiles
  int64_t kTiles = 1;     ///< kt: K tiles per token per input
  int64_t kTile = 64;     ///< tk: columns of one K tile
  /// false: x_i is [B, kt*tk] (a token's K tiles side by side); true: x_i is [B*kt, tk] (a
  /// token's K tiles are kt consecutive rows, as the attention writes its heads).
  bool kAlongRows = false;
  int64_t outTiles = 1;   ///< J: output column tiles per token
  int64_t outTile = 64;   ///< C: columns of one output tile
  /// W's first tile: row tile (units of C rows) and column tile (units of tk columns) of the
  /// weight tensor where this linear's block starts (a head group's slice of Wq).
  int64_t wRowTile = 0, wColTile = 0;
  bool residual = false;  ///< add `res` [B*J, C] (same layout as out)
};

/// Graph YAML text. Tensors: x0 .. x{n-1} (inputs, shapes as kAlongRows says), w [J*C,
/// n*kt*tk] (input; a larger tensor when mapped by composeGraph, with the origin above), res
/// (with residual) and out [B*J, C] (output). Per input i: the K tiles of x_i (re-read per
/// output tile) zipped with W's [C, tk] tiles, Map(matmul_t), Accum(add) over the K tiles;
/// the inputs' partial sums added in order (Zip, Map add), then res, then stored.
/// Deterministic. Throws DiagError G-120 when a size is < 1 or an origin < 0.
std::string buildLinearGraph(const LinearParams& p);

}  // namespace stepgen
