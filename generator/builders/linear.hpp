#pragma once
// buildLinearGraph: out = sum_i x_i W_i^T (+ res), a projection of a decoder layer (q, k, v,
// the attention output) as a STeP graph. All B tokens form one tile, so each weight tile is
// read once per step; the reduction dimension comes in K tiles, the output in column tiles of
// C, stored head-major ([J*B, C]: rows j*B .. j*B+B-1 are output tile j of every token).
#include <cstdint>
#include <string>

namespace stepgen {

/// Sizes of one linear (elements; fp32 tensors, row-major; W stored [out, in] as PyTorch's).
struct LinearParams {
  int64_t rows = 1;       ///< B: tokens (one tile)
  int64_t inputs = 1;     ///< n: input tensors x0 .. x{n-1}, each contributing kTiles K tiles
  int64_t kTiles = 1;     ///< KT: K tiles per input
  int64_t kTile = 64;     ///< TK: columns of one K tile
  /// false: x_i is [B, KT*TK] (K tile t = columns t*TK ..); true: x_i is [KT*B, TK] (K tile t
  /// = rows t*B .., the attention output laid out head-major).
  bool kAlongRows = false;
  int64_t outTiles = 1;   ///< J: output column tiles
  int64_t outTile = 64;   ///< C: columns of one output tile
  /// W's first tile: row tile (units of C rows) and column tile (units of TK columns) of the
  /// weight tensor where this linear's block starts (a KV head's slice of Wq).
  int64_t wRowTile = 0, wColTile = 0;
  bool residual = false;  ///< add `res` [B, J*C]
  /// true: out is [B, J*C] row-major, output tile j at column tile j (an imported projection,
  /// whose consumers read whole rows); false: head-major [J*B, C] as above.
  bool outColumns = false;
};

/// Graph YAML text. Tensors: x0 .. x{n-1} (inputs, shapes as kAlongRows says), w [J*C,
/// n*KT*TK] (input; a larger tensor when mapped by composeGraph, with the origin above), res
/// (with residual), out [J*B, C] (output; [B, J*C] with outColumns). Per output tile j and
/// input i: x_i's K tiles [B, TK] zipped with W's [C, TK] tiles, Map(matmul_t), Accum(add)
/// over the K tiles; the inputs' sums added in order (Zip, Map add), then res; tile j stored
/// at row tile j (column tile j with outColumns). Deterministic. Throws DiagError G-120 when a
/// size is < 1, an origin < 0, or residual with J > 1.
std::string buildLinearGraph(const LinearParams& p);

}  // namespace stepgen
