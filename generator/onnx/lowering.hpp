#pragma once
// The state of lowerOnnx (onnx_lower.hpp), shared by its two files: onnx_lower.cpp (values,
// streams, operands, broadcasting, the graph text) and onnx_operators.cpp (one method per
// ONNX operator, with the 0/1 products that form layouts on computed values). Internal: only
// those two files include it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "builders/compose.hpp"
#include "onnx/onnx_lower.hpp"
#include "onnx/onnx_moe.hpp"
#include "support/diag.hpp"

namespace stepgen::onnx_lowering {

/// The ONNX operators the lowering accepts (onnxSupportedOps lists them in this order).
inline const char* const kSupported[] = {
    "Add",       "Sub",       "Mul",       "Div",       "Neg",       "Exp",       "Sigmoid",         "Sqrt",  "Reciprocal",
    "Pow",       "MatMul",    "Gemm",      "Softmax",   "ReduceSum", "ReduceMean", "ReduceMax",      "ReduceSumSquare",
    "Transpose", "Reshape",   "Flatten",   "Squeeze",   "Unsqueeze", "Identity",  "Constant",        "Slice", "Concat",
    "Gather"};

/// The product of s[from .. to) (1 when empty).
inline int64_t product(const std::vector<int64_t>& s, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t k = from; k < std::min(to, s.size()); ++k) n *= s[k];
  return n;
}

/// The default 2-D view of a shape: [all dims but the last, the last].
inline std::pair<int64_t, int64_t> canonicalView(const std::vector<int64_t>& s) {
  if (s.empty()) return {1, 1};
  return {product(s, 0, s.size() - 1), s.back()};
}

/// `s` as a STeP name: characters other than letters and digits become '_', and a name that
/// would start with a digit (or be empty) gets a leading 'v'.
inline std::string sanitize(const std::string& s) {
  std::string o;
  for (char c : s) o += std::isalnum((unsigned char)c) ? c : '_';
  if (o.empty() || std::isdigit((unsigned char)o[0])) o = "v" + o;
  return o;
}

/// The largest divisor of f up to 32: the FFN tile of a MoE expert's or SwiGLU MLP's stage
/// (double-buffered [tf, D] weight tiles and [T, tf] activations fit a compute unit of the
/// shipped fabrics at the small dims).
inline int64_t ffnTile(int64_t f) {
  for (int64_t t = std::min<int64_t>(32, f); t > 1; --t)
    if (f % t == 0) return t;
  return 1;
}

/// A value during lowering: a leaf (graph input or constant, layout folded into its data)
/// or a computed stream with its 2-D view.
struct Val {
  std::vector<int64_t> shape;
  bool leaf = false;
  std::string source;                  ///< leaf: ONNX value the data comes from
  std::vector<OnnxLayoutStep> steps;   ///< leaf
  int stream = -1;                     ///< computed: its stream, s<stream> in the graph text
  int64_t rows = 1, cols = 1;          ///< computed: the view
  /// computed, shape [..., 1]: carried as a [rows, cols] tile whose columns are all equal
  /// (rowsum / rowmax fill the row), so broadcasting it back over cols columns is free.
  bool repl = false;
  /// computed: Transpose of its last two axes, not formed: the stream holds the value before
  /// it (view [batch * N, K] for shape [..., K, N]). Only a MatMul's second operand takes it
  /// (as matmul_t); anything else is O-204.
  bool tlast = false;
};

/// An operand as a consumer sees it: the name it reads (a use of stream s<id>) and its view.
struct Opnd {
  std::string stream;
  int id;
  int64_t rows, cols;
  int64_t tiles = 1;  ///< row tiles the stream carries, rows / tiles rows each (docs/onnx.md#tiling)
};

/// One lowering of one graph: lowerOnnx is Lowering(g).run().
class Lowering {
 public:
  Lowering(const OnnxGraph& g, const std::string& routingTrace, const OnnxSchedule& schedule)
      : g_(g), routingTrace_(routingTrace), sched_(schedule) {}

  OnnxImport run();

 private:
  const OnnxGraph& g_;
  const std::string routingTrace_;  ///< lowerOnnx's: MoE blocks replay it when not empty
  const OnnxSchedule sched_;
  std::vector<OnnxSwiglu> swiglus_;            ///< the SwiGLU MLPs lowered as stages (findOnnxSwiglus)
  std::map<int, const OnnxSwiglu*> swigluAt_;  ///< node index -> its MLP in swiglus_
  std::vector<OnnxAttention> attentions_;      ///< the attentions lowered as stages (findOnnxAttentions)
  std::map<int, const OnnxAttention*> attentionAt_;  ///< node index -> its attention in attentions_
  std::vector<int64_t> streamTiles_;  ///< per stream: its row tiles
  /// A leaf load whose tiling map() has not written yet, by its stream.
  struct LeafLoad {
    std::string name, tensor;
    size_t line;  ///< in ops_
    int64_t rows, cols;
  };
  std::map<int, LeafLoad> leafLoads_;
  bool pendingLoad(const Opnd& o) const { return leafLoads_.count(o.id) > 0; }
  int64_t matmulWords_ = 0;  ///< OnnxImport::matmulBufferWords so far
  OnnxImport imp_;
  std::map<std::string, Val> vals_;
  const OnnxNode* node_ = nullptr;
  std::vector<std::string> ops_;              ///< YAML op lines
  std::vector<std::vector<std::string>> uses_;  ///< per stream: the names its consumers read
  std::map<std::string, std::string> tensorLines_;
  std::map<std::string, int> nameCount_;  ///< per sanitized base name: suffixes taken (addTensor)
  /// A leaf's data (its source, layout steps and view, or a fill) -> its tensor: one tensor
  /// however many operators read the same data.
  std::map<std::string, std::string> leafTensors_;
  std::vector<std::string> tensorOrder_;
  int nextOp_ = 0;
  std::set<std::string> sqrtDivisors_;  ///< outputs of Sqrt nodes fused into their Div (findSqrtDivisors)
  std::map<int, std::string> siluOf_;   ///< Mul node index -> x of its x * Sigmoid(x) (findSilus)
  std::set<int> siluSigmoids_;          ///< the Sigmoid nodes of those products
  std::vector<OnnxMoe> moes_;           ///< the MoE blocks (findOnnxMoes), lowered at their root node
  std::map<int, const OnnxMoe*> moeAt_; ///< node index -> its block in moes_
  std::map<int, std::string> moeMisses_;  ///< TopK node -> why it starts no MoE block
  std::vector<GraphStage> stages_;      ///< one per lowered MoE block (its builders/moe graph)
  /// Per stream (index), the relative error bound of its values with fp32 / bf16 matmul
  /// operands; a stream not yet listed (a load) is exact.
  std::map<int, double> err_[2];

  // ---- diagnostics ----
  [[noreturn]] void fail(const std::string& id, const std::string& msg) const {
    std::string where = node_ ? fmt::format("node '{}' ({}, opset {}): ", node_->name, node_->op, g_.opset) : "";
    throw DiagError(id, SourceLoc{g_.path}, where + msg);
  }

  /// O-103 unless value `v` is float32 (the current node, if any, is named).
  void requireFloat(const std::string& v) const;

  std::vector<int64_t> shapeOf(const std::string& v) const;

  Val leafOf(const std::string& name) const;

  /// Per value, the live nodes and graph outputs that read it, and the live node that makes it.
  struct Uses {
    std::map<std::string, int> count;
    std::map<std::string, const OnnxNode*> producer;
  };
  Uses usesOf(const std::set<int>& live) const;

  /// Sqrt nodes whose one consumer divides by them: x / sqrt(y) becomes x * rsqrt(y) (one
  /// function instead of rsqrt, recip and recip again: RMSNorm's normalisation).
  void findSqrtDivisors(const std::set<int>& live);

  /// With OnnxSchedule::siluFunction: the Mul nodes x * Sigmoid(x) whose Sigmoid has no
  /// other use (outside MoE blocks and SwiGLU stages), lowered as one Map silu.
  void findSilus(const std::set<int>& live);

  std::set<int> liveNodes() const;

  /// The MoE block node `index` belongs to, or nullptr.
  const OnnxMoe* moeOf(int index) const {
    auto it = moeAt_.find(index);
    return it == moeAt_.end() ? nullptr : it->second;
  }

  // ---- emission ----
  int newStream();

  /// The relative error bound of Map `fn`'s output from its inputs' bounds and its own
  /// (docs/hardware.md section 3; u = 2^-24): products add their operands' errors plus u (K u
  /// for a sum of K terms; 2 x 2^-8 more with bf16 operands), add and sub take the larger
  /// operand's plus u (relative to the terms; cancellation is what the comparison's floor
  /// absorbs), exp 3.5e-4 plus 16 times its input's (exp's relative error is |x| times the
  /// input's; beyond |x| = 16 the comparison's floor of 1e-3 x the largest value absorbs it:
  /// a softmax term or a sigmoid tail below exp(-16) = 1.1e-7 of the row's largest), recip
  /// 5e-6 plus its input's, rsqrt 7e-6 plus half its input's, rowmax its input's, rowsum
  /// its input's plus C u.
  double errorOf(const std::string& fn, const Opnd& a, const Opnd* b, bool bf16) const;

  /// errorOf from the inputs' bounds `ea`, `eb` and the terms a product or row sum adds up
  /// (`terms`); silu (x times the fabric's sigmoid table) adds the table's 4e-3.
  static double errorFor(const std::string& fn, double ea, double eb, int64_t terms, bool bf16);

  /// The bound of stream `id` (0 for a load).
  double errorIn(int id, bool bf16) const;

  std::string opName(const std::string& what);

  /// A fresh consumer name of stream `s` (Broadcast branches are made from these at the end).
  std::string take(int s);

  std::string addTensor(const std::string& base, int64_t rows, int64_t cols, const std::string& role);

  Opnd loadLeaf(const std::string& tensor, int64_t rows, int64_t cols);

  /// Writes the load of leaf operand `o` as `tiles` row tiles (repeat: the whole tile `tiles`
  /// times, for the second operand of a product).
  void tileLoad(const Opnd& o, int64_t tiles, bool repeat);

  /// Row tiles of a value of `rows` rows whose operands are all leaves: rows / the tile rows
  /// the schedule gives the current node (its own, else tile_rows) where that divides, else 1.
  int64_t tilesFor(int64_t rows) const;

  /// The store of stream operand `o` into `tensor`, its row tiles one after another.
  std::string storeLine(const Opnd& o, const std::string& tensor);

  /// A constant table of `fill` in every word, [rows, cols].
  Opnd fillTable(float fill, int64_t rows, int64_t cols);

  /// The input tensor that holds leaf `t`'s data (one per distinct source, layout and view).
  std::string leafTensor(OnnxLeafTensor t);

  /// A leaf's data broadcast to `target` and seen as [rows, cols].
  Opnd leafOperand(const Val& v, const std::vector<int64_t>& target, int64_t rows, int64_t cols);

  /// Map `fn` of one stream, or of two zipped. The result has the row tiles of a computed
  /// operand (both: the same), or tilesFor(rows) when both are leaves; a leaf operand's load
  /// is tiled to match, the second operand of a product repeated whole per tile. O-205 when
  /// a product's second operand is a computed value and the rows are tiled (it would have
  /// to be repeated), or two computed operands are tiled differently.
  Opnd map(const std::string& fn, const Opnd& a, const Opnd* b, int64_t rows, int64_t cols);
  Opnd map1(const std::string& fn, const Opnd& a);
  Opnd map2(const std::string& fn, const Opnd& a, const Opnd& b);

  /// Widens a computed [1 | R, 1 | C] view to [R, C] by matmul with a table of ones (each
  /// word times 1.0 plus nothing else: exact).
  Opnd widen(Opnd x, int64_t rows, int64_t cols);

  /// Records value `name` as the result of stream-producing operand `o`.
  void define(const std::string& name, const Opnd& o, const std::vector<int64_t>& shape, bool repl = false);

  /// A fresh use of stream `s` with view [rows, cols].
  Opnd use(int s, int64_t rows, int64_t cols);

  /// One more consumer of the stream `o` reads.
  Opnd again(const Opnd& o);

  const Val& val(const std::string& name);

  /// val(name) for a consumer that needs the value formed (all but MatMul's second operand).
  const Val& formed(const std::string& name);

  /// Operand `name` broadcast to `target` (numpy rules) in view [rows, cols]. Leaves fold the
  /// broadcast into their data; a computed value must be the whole view, its rows, its
  /// columns or a scalar. A column-replicated value (Val::repl) of the same rows and width is
  /// taken as it is; otherwise its column 0 is extracted first.
  Opnd operand(const std::string& name, const std::vector<int64_t>& target, int64_t rows, int64_t cols, bool widenIt = true);

  /// Column 0 of a column-replicated tile, [rows, 1]: a matmul with e0 = [1, 0, ...]^T (each
  /// word times 1 or 0; a row whose value is infinite or NaN gives NaN).
  Opnd extractColumn(const Opnd& o);

  // ---- attributes ----
  std::optional<int64_t> intAttr(const OnnxNode& n, const std::string& k) const;
  std::optional<float> floatAttr(const OnnxNode& n, const std::string& k) const;

  /// The value of a constant input (initializer or Constant node), or nullptr.
  const OnnxTensor* constant(const std::string& name) const;

  // ---- operators ----
  void lowerNode(const OnnxNode& n);

  void lowerConstant(const OnnxNode& n);

  void binary(const OnnxNode& n);

  /// The view an elementwise result takes and the shape its leaf operands are broadcast to.
  struct View {
    int64_t rows, cols;
    std::vector<int64_t> target;
    bool repl;  ///< a column-replicated operand of the result's shape sets the view
  };

  /// A computed operand's view when it has the result's shape, else the canonical one.
  View viewFor(const std::vector<std::string>& ins, const std::vector<int64_t>& out);

  void unary(const OnnxNode& n);

  /// SiLU product `n` = x * Sigmoid(x) as Map silu of `x` (findSilus).
  void silu(const OnnxNode& n, const std::string& x);

  void power(const OnnxNode& n);

  /// A 2-D operand of a product: leaves take any layout; a computed value its own view.
  Opnd matrixOperand(const std::string& name, const std::vector<int64_t>& shape2);

  void matmul(const OnnxNode& n);

  void gemm(const OnnxNode& n);

  /// Operand `name` as rows over the axes `reduced` (sorted): the view [product of the other
  /// dims, product of these]. A leaf's data is transposed so they come last; a computed
  /// value must already be laid out so (trailing axes, its own view).
  Opnd rowOperand(const std::string& name, const std::vector<size_t>& reduced);

  size_t axisOf(int64_t axis, size_t rank);

  void softmax(const OnnxNode& n);

  void reduce(const OnnxNode& n);

  void layout(const OnnxNode& n);

  /// Rows of x (shape `in`, canonical view) reordered as Transpose(perm) with the last axis
  /// kept: out = P x with P the 0/1 permutation of the leading indices.
  Opnd rowPermutation(const Opnd& x, const std::vector<int64_t>& in, const std::vector<int64_t>& perm);

  /// The integers of a constant input or, before opset 10, of attribute `attr`.
  std::vector<int64_t> intsOf(const OnnxNode& n, size_t input, const std::string& attr, bool required);

  /// A 0/1 matrix [rows, cols] with ones at (r0 + k, c0 + k), k < count: multiplying by it
  /// selects or places rows or columns (each word times 1 plus zeros: exact for finite values).
  Opnd placement(int64_t rows, int64_t cols, int64_t r0, int64_t c0, int64_t count);

  /// A 0/1 matrix [rows, cols] with ones at the given (row, col) places.
  Opnd zeroOne(int64_t rows, int64_t cols, const std::vector<std::pair<int64_t, int64_t>>& ones);

  /// A computed value in its canonical view (a column-replicated one's column 0 extracted).
  Opnd canonicalOperand(const std::string& name);

  /// [R, C] data regrouped to [R2, C2] (same order, R C = R2 C2) by 0/1 products: columns
  /// split into k groups (C = k C2: out = sum_j P_j x S_j) or rows merged (C2 = k C: out =
  /// sum_j Q_j x T_j).
  Opnd regroup(const std::string& name, const Opnd& x, int64_t r2, int64_t c2);

  /// Slice: folded into a leaf's data; on a computed value, along the last axis (a product
  /// with a column selection) or the first (rows) with step 1.
  void slice(const OnnxNode& n);

  /// Concat along the last axis (each part times a matrix placing its columns, summed) or
  /// the first (rows placed likewise).
  void concat(const OnnxNode& n);

  /// Gather of an input or constant tensor (data [P.., N, R..], axis at N) by integer
  /// indices (K of them, an input or constant): an index load (RandomOffChipLoad with
  /// `index`, docs/step_semantics.md#randomoffchipload) of the data viewed [P N, R] by meta
  /// rows [P K, 16] (IndexRows), the result [P K, R] in P K row tiles of one row. O-204 for
  /// a computed data operand, O-103 for indices that are not integers.
  void gather(const OnnxNode& n);

  /// A MoE block (onnx_moe.hpp) as builders/moe's layer with the router on the fabric
  /// (MoeParams::router, dynamic token tiles): h is stored to a state tensor <stage>_x, the
  /// layer's stage reads it, and its y (state <stage>_y) is loaded back as the block's output.
  /// The router and expert weights become the stage's input tensors (Wr^T, the experts'
  /// Wg^T / Wu^T / Wd stacked by rows). The F tile is the largest divisor of F up to 32.
  /// With routingTrace_, the layer replays it instead of routing (SelectGen over
  /// "routing.csv" beside the graph; rw and routing rows from its first T tokens as graph moe
  /// --trace writes them, seeded weights). O-202 when the layer's sizes are out of range
  /// (builders/moe checkMoeParams) or the trace has fewer tokens or other experts.
  void lowerMoe(const OnnxMoe& m);

  /// A SwiGLU MLP (onnx_moe.hpp OnnxSwiglu) as builders/swiglu's layer in a stage, as
  /// lowerMoe does. Tiles: h's rows as tilesFor gives them, the FFN width in ffnTile's. The weights are the layer's wg, wu, wd as the model stores them
  /// ([D, F], [D, F], [F, D]). O-202 when the layer's sizes are out of range (G-120).
  void lowerSwiglu(const OnnxSwiglu& s);

  /// A softmax attention (onnx_moe.hpp OnnxAttention) as builders/attention's single pass
  /// (buildSinglePassAttention) in a stage, as lowerSwiglu does: q stored for it, K and V the
  /// stage's k and v, KV tiles of the largest divisor of L up to 32. O-202 when its sizes
  /// have no STeP layer.
  void lowerAttention(const OnnxAttention& a);

  /// The product x W of x [m, k] by a weight leaf `w` ([k, n]; [n, k] when `stored`, as
  /// Gemm's transB keeps it) as builders/linear's layer in a stage (outColumns), where the
  /// schedule has linear stages (OnnxSchedule::linearStageWords) and W does not fit them for
  /// one row; nullopt otherwise. Tiles: the K tile TK and output tile C, multiples of 16
  /// dividing k and n, of the largest TK x C whose [m, TK] x [TK, C] product fits. O-202
  /// when none does.
  std::optional<Opnd> linearStage(const Opnd& x, const Val& w, bool stored, int64_t n);

  /// A stage's input tensor `tensor` holding the import's own `data` (an import constant).
  void constantLeaf(const std::string& tensor, const Matrix& data);

  /// The stage that replaces a [rows, cols] value: stores operand `x` to state <prefix>_x,
  /// appends stage `text` (its `inTensor` and `outTensor` shared with states <prefix>_x,
  /// <prefix>_y) and returns the load of <prefix>_y, [rows, outCols] (outCols 0: cols).
  Opnd stageAround(const std::string& prefix, const std::string& text, const std::string& inTensor, const Opnd& x,
                   int64_t rows, int64_t cols, const std::string& outTensor, int64_t outCols = 0);

  void storeOutput(const std::string& name);

  /// Resolves stream names: one consumer reads the producer's stream, several get a Broadcast.
  OnnxImport finish();
};

}  // namespace stepgen::onnx_lowering
