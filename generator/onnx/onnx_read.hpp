#pragma once
// readOnnx: an ONNX model file as plain data (docs/onnx.md). The protobuf types stay in
// onnx_read.cpp; the lowering (onnx_lower.hpp) sees only these structs.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepgen {

/// The ONNX opsets (default domain) the importer reads: ONNX 1.12 defines up to 17. Before
/// 7 the arithmetic operators broadcast by a `broadcast` / `axis` attribute, which the
/// importer refuses (O-202) when it is set.
constexpr int64_t kOnnxMinOpset = 1;
constexpr int64_t kOnnxMaxOpset = 17;

/// A tensor's value: float32 data as floats, integer types (int32/int64) as int64s.
struct OnnxTensor {
  std::vector<int64_t> shape;  ///< outermost first; empty for a scalar
  bool isFloat = true;
  std::vector<float> f;        ///< isFloat: product(shape) values, row-major
  std::vector<int64_t> i;      ///< !isFloat
  std::string file;            ///< the file it was read from (a given input), for messages; may be empty
  int64_t count() const;       ///< product of shape (1 for a scalar)
};

/// One attribute of a node (the kinds the importer reads: int, float, ints, tensor).
struct OnnxAttr {
  std::optional<int64_t> i;
  std::optional<float> f;
  std::vector<int64_t> ints;
  std::optional<OnnxTensor> t;
  std::string kind;  ///< ONNX's type name (INT, FLOAT, INTS, TENSOR, STRING, ...)
};

struct OnnxNode {
  std::string name;  ///< the node's name, or "#<index>" when the file gives none
  std::string op;    ///< op type, e.g. "MatMul"
  std::string domain;
  int index = 0;     ///< position in the graph's node list (0-based)
  std::vector<std::string> inputs, outputs;  ///< value names; "" for an omitted optional input
  std::map<std::string, OnnxAttr> attrs;
};

/// A whole model after ONNX's own shape inference.
struct OnnxGraph {
  std::string path;
  int64_t opset = 0;                            ///< default-domain opset (0: the model imports none)
  std::vector<OnnxNode> nodes;                  ///< in file order (ONNX requires topological)
  std::map<std::string, OnnxTensor> initializers;
  std::vector<std::string> inputs;              ///< graph inputs that are not initializers
  std::vector<std::string> outputs;
  /// Static shape of every value whose shape is known (inputs, outputs, inferred).
  std::map<std::string, std::vector<int64_t>> shapes;
  /// ONNX's name of each typed value's element type (FLOAT, INT64, UINT8, ...).
  std::map<std::string, std::string> elemTypes;
  /// True if value `v` is typed INT64 or INT32 (indices, shapes, axes).
  bool isInteger(const std::string& v) const {
    auto it = elemTypes.find(v);
    return it != elemTypes.end() && (it->second == "INT64" || it->second == "INT32");
  }
};

/// Reads `path` and runs ONNX's shape inference on it (any opset and domain: lowerOnnx
/// decides what it supports). Throws DiagError: O-101 unreadable or malformed file, O-103 a
/// tensor stored outside the file (external data) or of an element type other than float32
/// / int32 / int64.
OnnxGraph readOnnx(const std::string& path);

/// Reads one serialized TensorProto (an ONNX test's input_*.pb / output_*.pb); `*name` gets
/// its name. Throws DiagError O-101 / O-103 as readOnnx.
OnnxTensor readTensorFile(const std::string& path, std::string* name = nullptr);

}  // namespace stepgen
