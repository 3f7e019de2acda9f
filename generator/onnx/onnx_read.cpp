// readOnnx: protobuf parsing (libonnx's generated classes) and ONNX's own shape inference.
#include "onnx/onnx_read.hpp"

#include <fmt/format.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cstring>
#include <fstream>

#include "support/diag.hpp"

namespace stepgen {

int64_t OnnxTensor::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

[[noreturn]] void malformed(const std::string& path, const std::string& what) {
  throw DiagError("O-101", SourceLoc{path}, "not a readable ONNX file: " + what);
}

OnnxTensor tensorOf(const onnx::TensorProto& t, const std::string& path) {
  OnnxTensor out;
  for (int64_t d : t.dims()) out.shape.push_back(d);
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    throw DiagError("O-103", SourceLoc{path},
                    fmt::format("tensor '{}' keeps its data in an external file; stepgen reads weights stored in the "
                                "model (export without external data, or give the weights as inputs)", t.name()));
  const int64_t n = out.count();
  const std::string& raw = t.raw_data();
  auto wrongCount = [&](int64_t got) {
    malformed(path, fmt::format("tensor '{}' has {} values for its shape of {}", t.name(), got, n));
  };
  switch (t.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
      if (!raw.empty()) {
        if (int64_t(raw.size()) != n * 4) wrongCount(int64_t(raw.size()) / 4);
        out.f.resize(size_t(n));
        std::memcpy(out.f.data(), raw.data(), raw.size());  // ONNX raw data is little-endian, as this host
      } else {
        if (t.float_data_size() != n) wrongCount(t.float_data_size());
        out.f.assign(t.float_data().begin(), t.float_data().end());
      }
      return out;
    case onnx::TensorProto_DataType_INT64:
    case onnx::TensorProto_DataType_INT32: {
      out.isFloat = false;
      const bool is64 = t.data_type() == onnx::TensorProto_DataType_INT64;
      if (!raw.empty()) {
        const size_t w = is64 ? 8 : 4;
        if (int64_t(raw.size()) != n * int64_t(w)) wrongCount(int64_t(raw.size() / w));
        for (int64_t k = 0; k < n; ++k) {
          if (is64) {
            int64_t v;
            std::memcpy(&v, raw.data() + k * 8, 8);
            out.i.push_back(v);
          } else {
            int32_t v;
            std::memcpy(&v, raw.data() + k * 4, 4);
            out.i.push_back(v);
          }
        }
      } else if (is64) {
        if (t.int64_data_size() != n) wrongCount(t.int64_data_size());
        out.i.assign(t.int64_data().begin(), t.int64_data().end());
      } else {
        if (t.int32_data_size() != n) wrongCount(t.int32_data_size());
        out.i.assign(t.int32_data().begin(), t.int32_data().end());
      }
      return out;
    }
    default:
      throw DiagError("O-103", SourceLoc{path},
                      fmt::format("tensor '{}' has element type {}; stepgen computes in float32 and reads int32 / int64 "
                                  "only for shapes, axes and indices",
                                  t.name(), onnx::TensorProto_DataType_Name(t.data_type())));
  }
}

void noteValue(OnnxGraph& g, const onnx::ValueInfoProto& v) {
  if (!v.type().has_tensor_type()) return;
  const auto& tt = v.type().tensor_type();
  g.elemTypes[v.name()] = onnx::TensorProto_DataType_Name(tt.elem_type());
  if (!tt.has_shape()) return;
  std::vector<int64_t> s;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value()) return;  // symbolic or unknown: no static shape
    s.push_back(d.dim_value());
  }
  g.shapes[v.name()] = s;
}

}  // namespace

OnnxGraph readOnnx(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DiagError("O-101", SourceLoc{path}, "cannot open the ONNX file");
  onnx::ModelProto m;
  if (!m.ParseFromIstream(&in)) malformed(path, "the protobuf does not parse as an ONNX ModelProto");
  if (!m.has_graph()) malformed(path, "the model has no graph");
  OnnxGraph g;
  g.path = path;
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") g.opset = o.version();
  }
  try {
    onnx::shape_inference::InferShapes(m);
  } catch (const std::exception& e) {
    malformed(path, std::string("ONNX shape inference failed: ") + e.what());
  }
  const onnx::GraphProto& gp = m.graph();
  for (const auto& t : gp.initializer()) {
    g.initializers[t.name()] = tensorOf(t, path);
    g.shapes[t.name()] = g.initializers[t.name()].shape;
    g.elemTypes[t.name()] = onnx::TensorProto_DataType_Name(t.data_type());
  }
  for (const auto& v : gp.input()) {
    noteValue(g, v);
    if (!g.initializers.count(v.name())) g.inputs.push_back(v.name());
  }
  for (const auto& v : gp.output()) {
    noteValue(g, v);
    g.outputs.push_back(v.name());
  }
  for (const auto& v : gp.value_info()) noteValue(g, v);
  for (int k = 0; k < gp.node_size(); ++k) {
    const onnx::NodeProto& np = gp.node(k);
    OnnxNode n;
    n.index = k;
    n.name = np.name().empty() ? fmt::format("#{}", k) : np.name();
    n.op = np.op_type();
    n.domain = np.domain();
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (const auto& a : np.attribute()) {
      OnnxAttr x;
      x.kind = onnx::AttributeProto_AttributeType_Name(a.type());
      if (a.type() == onnx::AttributeProto_AttributeType_INT) x.i = a.i();
      if (a.type() == onnx::AttributeProto_AttributeType_FLOAT) x.f = a.f();
      if (a.type() == onnx::AttributeProto_AttributeType_INTS) x.ints.assign(a.ints().begin(), a.ints().end());
      if (a.type() == onnx::AttributeProto_AttributeType_TENSOR) x.t = tensorOf(a.t(), path);
      n.attrs[a.name()] = x;
    }
    g.nodes.push_back(std::move(n));
  }
  return g;
}

OnnxTensor readTensorFile(const std::string& path, std::string* name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DiagError("O-101", SourceLoc{path}, "cannot open the tensor file");
  onnx::TensorProto t;
  if (!t.ParseFromIstream(&in)) malformed(path, "the protobuf does not parse as an ONNX TensorProto");
  if (name) *name = t.name();
  OnnxTensor v = tensorOf(t, path);
  v.file = path;
  return v;
}

}  // namespace stepgen
