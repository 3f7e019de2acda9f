#pragma once
// lowerOnnx: an ONNX graph (onnx_read.hpp) as a STeP graph (docs/onnx.md). Each ONNX value is
// one tile: its 2-D view [rows, cols] is [product of all dims but the last, last dim] unless
// an operator needs another grouping (Softmax before opset 13, a reduction over several
// trailing axes). Graph inputs and constants are off-chip tensors whose layout operators
// (Transpose, Reshape, broadcasting) are folded into how their data is written, so only
// arithmetic reaches the fabric.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "arch/arch_model.hpp"
#include "ir/tokens.hpp"
#include "support/diag.hpp"
#include "onnx/onnx_read.hpp"

namespace stepgen {

/// One layout step applied to a source tensor's data, in order (numpy semantics).
struct OnnxLayoutStep {
  enum class Kind { Transpose, Reshape, Broadcast, Scale, Slice, IndexRows } kind;
  /// Transpose: perm; Reshape / Broadcast: the new shape; Slice: axis, start, step, count;
  /// IndexRows: P, N (an integer index tensor as a Gather's meta rows, onnxInputMatrices)
  std::vector<int64_t> ints;
  float scale = 1.0f;         ///< Scale: every value times this (Gemm's beta), in fp32
};

/// An input tensor of the imported STeP graph: an ONNX graph input or constant with its
/// layout steps, or a constant table (`fill` in every word), seen as [rows, cols].
struct OnnxLeafTensor {
  std::string tensor;  ///< STeP tensor name
  std::string source;  ///< ONNX value name; empty for a fill table
  std::vector<OnnxLayoutStep> steps;
  std::optional<float> fill;
  int64_t rows = 1, cols = 1;
  /// When not empty, the tensor is these parts' rows one after the other (a MoE block's
  /// experts' weights stacked); source, steps and fill are then unused.
  std::vector<OnnxLeafTensor> stack;
};

/// A graph output: the STeP tensor that holds ONNX output `name`, row-major in ONNX's order.
struct OnnxOutput {
  std::string name, tensor;
  std::vector<int64_t> shape;
};

/// The imported graph.
struct OnnxImport {
  std::string yaml;                          ///< graph YAML text (docs/graph_format.md)
  std::vector<OnnxLeafTensor> leaves;        ///< the graph's input tensors
  std::vector<OnnxOutput> outputs;           ///< in the ONNX graph's output order
  /// The constants the import adds beside the model's initializers: Constant nodes' values
  /// and the 0/1 matrices that form layouts, by name.
  std::map<std::string, OnnxTensor> constants;
  std::vector<std::string> ops;              ///< op types of the live nodes, in node order
  /// A bound on the outputs' relative error from the fabric's arithmetic, propagated
  /// through the graph (onnx_lower.cpp errorOf): index 0 with fp32 matmul operands, 1 with
  /// bf16 operands (number_format bf16_fp32).
  double relErrorBound[2] = {0, 0};
  /// The most local memory one of its matmuls takes, words (ComputeUnitParams::matmulBufferWords
  /// of its row tile): what chooseOnnxSchedule compares with a compute unit's buffer.
  int64_t matmulBufferWords = 0;
};

/// How the importer schedules a model (docs/onnx.md#tiling): values whose operators work row
/// by row (elementwise, reductions and softmax over the last axis, products by a constant)
/// stream in tiles of `tileRows` rows where that divides their rows (0: every value one tile);
/// with `swigluStages`, each SwiGLU MLP ((silu(h Wg)) * (h Wu)) Wd, silu as x * sigmoid(x)) is
/// builders/swiglu's layer as a stage (docs/onnx.md#swiglu): tiled over its FFN width, its
/// SiLU the fabric's Map silu. With `siluFunction`, every other SiLU (x * Sigmoid(x), the
/// Sigmoid used by that product only) is one Map silu instead of sigmoid's exp, add, recip
/// and the product (docs/onnx.md#silu).
///
/// With `attentionStages`, each softmax attention over a KV cache held in weights
/// (Softmax(q @ Transpose(K)) @ V, onnx_moe.hpp OnnxAttention) is builders/attention's single
/// pass over KV tiles as a stage (docs/onnx.md#attention): the scores are never one whole
/// [queries, L] tile.
///
/// With `linearStageWords` > 0, each product of a value by a weight (MatMul or Gemm whose
/// second operand is an input or constant, [K, N]) that does not fit that many words of a
/// compute unit even for one row (ComputeUnitParams::matmulBufferWords(1, K, N)) is
/// builders/linear's layer as a stage (docs/onnx.md#linear): K tiles accumulated and output
/// column tiles, multiples of 16 columns, the largest whose product fits.
struct OnnxSchedule {
  int64_t tileRows = 0;
  bool swigluStages = false;
  bool siluFunction = false;
  bool attentionStages = false;
  int64_t linearStageWords = 0;  ///< words (a compute unit's buffer); 0: no linear stages
  /// One node's tile rows, where its schedule entry is (for O-104 and O-205).
  struct NodeTiles {
    int64_t tileRows = 0;
    SourceLoc at;
  };
  /// Per ONNX node name: the tile rows of the values it starts (a node whose operands are all
  /// inputs or constants); overrides tileRows there. A node whose operands are computed takes
  /// their tiles, and an entry that differs is O-205.
  std::map<std::string, NodeTiles> nodeTileRows;
};

/// The relative tolerance of an imported graph's outputs: the propagated bound of the
/// fabric's arithmetic (OnnxImport::relErrorBound; docs/hardware.md section 3) plus 2^-23 for
/// the reference's own rounding.
double onnxTolerance(const OnnxImport& imp, bool bf16Operands);

/// The operators lowerOnnx accepts, for messages and docs: "Add, Sub, ...".
std::string onnxSupportedOps();

/// Lowers `g` (static shapes, float32 values). Throws DiagError naming the file and the
/// node's name, op type and opset: O-201 unsupported operator, O-202 unsupported attribute
/// or input value (e.g. Pow with exponent 3, Softmax over a middle axis at opset 13), O-203 a
/// value without a static shape, O-204 a layout the fabric cannot form on a computed value
/// (a transpose or regrouping after arithmetic, a broadcast that is not of rows, columns or
/// a scalar), O-103 a value of a type other than float32. With `routingTrace` (a routing
/// CSV, support/routing_trace.hpp) every Mixture-of-Experts block replays its first tokens
/// instead of routing on the fabric (for the timing-only model, which computes no logits;
/// the graph reads it as "routing.csv" beside itself). `schedule`: OnnxSchedule; O-205 where
/// its row tiles reach an operator that needs a whole value (a product whose second operand
/// is computed: attention's scores, the 0/1 products that form layouts). Deterministic.
OnnxImport lowerOnnx(const OnnxGraph& g, const std::string& routingTrace = "", const OnnxSchedule& schedule = {});

/// The schedule for fabric `a`: SwiGLU stages when its compute unit has matmul, silu, mul and
/// accum; linear stages above its buffer's words when it has matmul_t and accum; SiLU as Map
/// silu when it has silu; attention stages when it has the single-pass attention's functions
/// (matmul_t, rowmax, rowsum, scan_max, scan_max_exclusive, accum_rescale, rowscale, sub, exp,
/// recip); whole tiles when every other matmul fits the unit's local memory
/// (OnnxImport::matmulBufferWords), else the largest power-of-two tile rows (below the
/// whole) with which every matmul fits and the graph lowers; whole tiles when none does
/// (mapping then reports M-302 for the product too big). Lowers `g` once per candidate (at
/// most 16). Throws lowerOnnx's errors for the whole-tile lowering.
OnnxSchedule chooseOnnxSchedule(const OnnxGraph& g, const ArchModel& a, const std::string& routingTrace = "");

/// Reads an import schedule (docs/onnx.md#tiling): a YAML map with `tile_rows: N` (N >= 0;
/// 0 or the key left out: whole tiles), `swiglu_stages: true|false`, `silu_function:
/// true|false`, `attention_stages: true|false`, `linear_stage_words: N` (N >= 0), `regions:
/// [{nodes: [<ONNX node name>, ...], tile_rows: N}]` (the same tile rows for several nodes) and `nodes: {<ONNX node
/// name>: {tile_rows: N}}`. Throws DiagError O-104 naming the file, line and key for an
/// unreadable file, another key, a bad value or a node scheduled twice (lowerOnnx: for a
/// node name the model lacks).
OnnxSchedule readOnnxSchedule(const std::string& path);

/// The input matrices of the imported graph: each leaf's source (the model's initializers,
/// the import's constants, or `given` for graph inputs) through its layout steps, as fp32 bit
/// patterns [rows, cols]. A Gather's indices (IndexRows: P, N) become its meta rows: for each
/// p < P and index i, a row of uint32 words whose word 0 is p N + i (i + N for a negative
/// i), the rest 0. A graph input missing from `given` is skipped unless `requireInputs`,
/// which throws DiagError R-401 for it; R-402 when its shape differs from the model's; R-411
/// for an index outside [-N, N).
std::map<std::string, Matrix> onnxInputMatrices(const OnnxImport& imp, const OnnxGraph& g,
                                                const std::map<std::string, OnnxTensor>& given,
                                                bool requireInputs = true);

}  // namespace stepgen
