#include "model/model.hpp"

#include <algorithm>
#include <chrono>

#include "ir/attrs.hpp"

namespace stepgen {

namespace {

int64_t tileBytes(const StepGraph& g, const ElemType& e) {
  if (e.kind == ElemType::Kind::Tuple) {
    int64_t b = 0;
    for (const auto& p : e.parts) b += tileBytes(g, p);
    return b;
  }
  if (e.kind != ElemType::Kind::Tile) return 0;
  return evalDim(e.tile.at(0), g.symbols) * evalDim(e.tile.at(1), g.symbols) * 4;
}

int64_t count(const StepGraph& g, const std::vector<SymExpr>& shape) {
  int64_t n = 1;
  for (const auto& d : shape) n *= evalDim(d, g.symbols);
  return n;
}

}  // namespace

ModelResult runModel(const StepGraph& g, const ShapeResult& s, const Mapping& m, const ArchModel& a,
                     const std::map<std::string, Matrix>& inputs) {
  auto t0 = std::chrono::steady_clock::now();
  ModelResult r;
  FunctionalResult f = runFunctional(g, s, a, inputs);
  r.timing = estimateTiming(g, m, a, f.streams);
  r.outputs = std::move(f.outputs);

  std::map<int, int64_t> flopsPerUnit;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const auto& inT = op.inputs.empty() ? StreamType{} : s.types.at(op.inputs[0].v);
    const auto& outT = op.outputs.empty() ? StreamType{} : s.types.at(op.outputs[0].v);
    switch (op.kind) {
      case OpKind::LinearOffChipLoad:
        r.onchipBytes += 2 * tileBytes(g, outT.elem);
        r.offchipBytes += count(g, outT.shape) * tileBytes(g, outT.elem);
        break;
      case OpKind::LinearOffChipStore:
        r.onchipBytes += 2 * tileBytes(g, inT.elem);
        r.offchipBytes += count(g, inT.shape) * tileBytes(g, inT.elem);
        break;
      case OpKind::Bufferize: {
        int64_t buf = tileBytes(g, inT.elem);
        int b = int(attrInt(g, op, "b"));
        for (int d = 0; d < b; ++d) buf *= evalDim(inT.shape.at(inT.shape.size() - 1 - d), g.symbols);
        r.onchipBytes += tileBytes(g, inT.elem) + 2 * buf;
        break;
      }
      case OpKind::Accum:
        r.onchipBytes += tileBytes(g, outT.elem);
        break;
      case OpKind::Map: {
        std::string fn = attrString(op, "fn");
        int64_t n = count(g, outT.shape), flops = 0;
        if (fn == "matmul") {
          const auto& pa = inT.elem.parts.at(0);
          int64_t M = evalDim(pa.tile[0], g.symbols), K = evalDim(pa.tile[1], g.symbols);
          int64_t N = evalDim(outT.elem.tile[1], g.symbols);
          flops = 2 * M * K * N * n;
          r.onchipBytes += tileBytes(g, inT.elem) + tileBytes(g, outT.elem);
        } else {
          int64_t per = fn == "silu" ? 8 : 1;
          flops = per * tileBytes(g, outT.elem) / 4 * n;
        }
        r.flops += flops;
        flopsPerUnit[m.ops[i].unit] += flops;
        break;
      }
      default:
        break;
    }
  }
  double bound = double(r.offchipBytes) / a.offchipBytesPerCycle();
  for (const auto& [u, f] : flopsPerUnit) bound = std::max(bound, double(f) / a.cu.flopsPerCycle);
  r.rooflineCycles = bound;
  r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace stepgen
