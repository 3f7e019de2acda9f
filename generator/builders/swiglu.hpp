#pragma once
// buildSwigluGraph: writes the STeP graph YAML of one SwiGLU FFN layer,
// out = (silu(x Wg) * (x Wu)) Wd, with the schedule of docs/step_semantics.md#swiglu-closed-form (x re-read once
// per F tile, each weight read once per batch tile, partial products accumulated over F).
#include <cstdint>
#include <string>

namespace stepgen {

/// Sizes of one SwiGLU layer (all in elements; tensors are fp32, row-major).
struct SwigluParams {
  int64_t batch = 64;    ///< B: rows of x and out
  int64_t hidden = 256;  ///< D: columns of x and out, rows of Wg/Wu, columns of Wd
  int64_t ffn = 512;     ///< F: columns of Wg/Wu, rows of Wd
  int64_t tileB = 16;    ///< tb: batch rows per tile (must divide batch)
  int64_t tileF = 16;    ///< tf: FFN columns per tile (must divide ffn); the hidden tile is D
};

/// Graph YAML text (docs/graph_format.md) for the layer: tensors x [B,D], wg [D,F],
/// wu [D,F], wd [F,D] (inputs) and out [B,D] (output); 16 ops, 16 streams. Deterministic:
/// the same parameters always give the same bytes.
/// Throws DiagError G-120 if a size is < 1 or a tile does not divide its dimension.
std::string buildSwigluGraph(const SwigluParams& p);

/// Graph YAML text for a stack of `layers` SwiGLU layers with the sizes of `p`: layer l reads
/// x_l (x for l = 0: its output tiles o_(l-1) repeated F/tf times by a RepeatStatic) and
/// weights wg_l, wu_l, wd_l; the last layer's output is stored to `out`. Each layer has the
/// SwiGLU schedule and op names with suffix _l. Deterministic. Throws DiagError G-120 as
/// buildSwigluGraph, and for layers < 1.
std::string buildSwigluStack(const SwigluParams& p, int layers);

/// The ops lines shared by the SwiGLU, stack and MoE graphs: from the zipped x tiles (streams
/// x_g, x_u) and weight tiles (wg_t, wu_t, wd_t) to the output tiles o, Accum'ed over the F
/// tiles: g = x Wg, u = x Wu with `gateUpFn` (matmul, or matmul_t for weights stored
/// [out, in]), h = silu(g) * u, o = sum over F tiles of h Wd. Every op and stream name gets
/// the suffix `sfx` (e.g. "_0" in a stack).
std::string swigluCoreOps(const std::string& gateUpFn, const std::string& sfx);

}  // namespace stepgen
