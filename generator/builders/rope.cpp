// buildRopeGraph: RoPE as a STeP graph, assembled line by line in a fixed order.
#include "builders/rope.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/fp.hpp"
#include "support/diag.hpp"

namespace stepgen {

namespace {

void checkParams(const RopeParams& p) {
  auto bad = [](const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "rope: " + msg); };
  if (p.positions.empty()) bad("needs at least one position");
  for (int64_t pos : p.positions)
    if (pos < 0) bad(fmt::format("position {} is negative", pos));
  if (p.heads < 1) bad(fmt::format("heads must be >= 1, got {}", p.heads));
  if (p.headDim < 2 || p.headDim % 2) bad(fmt::format("head_dim must be even and >= 2, got {}", p.headDim));
  if (!(p.theta > 1) || !std::isfinite(p.theta)) bad(fmt::format("theta must be a finite number > 1, got {}", p.theta));
  if (!(p.scale > 0) || !std::isfinite(p.scale)) bad(fmt::format("scale must be a finite number > 0, got {}", p.scale));
}

}  // namespace

std::string buildRopeGraph(const RopeParams& p) {
  checkParams(p);
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# RoPE (rotate-half): out1 = x1 cos - x2 sin, out2 = x2 cos + x1 sin for the halves x1, x2 of");
  line("# each row (docs/graph_format.md#rope). Written by stepgen (buildRopeGraph). Row r is a head");
  line("# of request r / heads; cos and sin hold that request's position's angles.");
  line("stepgraph: rope");
  line(fmt::format("symbols: {{N: {}, H: {}}}", int64_t(p.positions.size()) * p.heads, p.headDim / 2));
  line("tensors:");
  line("  x:   {shape: [N, 2*H], role: input}");
  line("  cos: {shape: [N, H], role: input}");
  line("  sin: {shape: [N, H], role: input}");
  line("  out: {shape: [N, 2*H], role: output}");
  line("ops:");
  line("  - {name: load_x1, op: LinearOffChipLoad, tensor: x, tile: [1, H], iter: [N], strides: [[1, 0]], out: x1}");
  line("  - {name: load_x2, op: LinearOffChipLoad, tensor: x, tile: [1, H], iter: [N], strides: [[1, 0]], origin: [0, 1], out: x2}");
  line("  - {name: load_cos, op: LinearOffChipLoad, tensor: cos, tile: [1, H], iter: [N], strides: [[1, 0]], out: cs}");
  line("  - {name: load_sin, op: LinearOffChipLoad, tensor: sin, tile: [1, H], iter: [N], strides: [[1, 0]], out: sn}");
  line("  - {name: bcast_x1, op: Broadcast, in: x1, out: [x1c, x1s]}");
  line("  - {name: bcast_x2, op: Broadcast, in: x2, out: [x2c, x2s]}");
  line("  - {name: bcast_cos, op: Broadcast, in: cs, out: [c1, c2]}");
  line("  - {name: bcast_sin, op: Broadcast, in: sn, out: [s1, s2]}");
  line("  - {name: zip_1c, op: Zip, in: [x1c, c1], out: z1c}");
  line("  - {name: x1_cos, op: Map, fn: mul, in: z1c, out: a}");
  line("  - {name: zip_2s, op: Zip, in: [x2s, s1], out: z2s}");
  line("  - {name: x2_sin, op: Map, fn: mul, in: z2s, out: b}");
  line("  - {name: zip_o1, op: Zip, in: [a, b], out: ab}");
  line("  - {name: out1, op: Map, fn: sub, in: ab, out: o1}");
  line("  - {name: zip_2c, op: Zip, in: [x2c, c2], out: z2c}");
  line("  - {name: x2_cos, op: Map, fn: mul, in: z2c, out: c}");
  line("  - {name: zip_1s, op: Zip, in: [x1s, s2], out: z1s}");
  line("  - {name: x1_sin, op: Map, fn: mul, in: z1s, out: d}");
  line("  - {name: zip_o2, op: Zip, in: [c, d], out: cd}");
  line("  - {name: out2, op: Map, fn: add, in: cd, out: o2}");
  line("  - {name: store_1, op: LinearOffChipStore, in: o1, tensor: out, iter: [N], strides: [[1, 0]]}");
  line("  - {name: store_2, op: LinearOffChipStore, in: o2, tensor: out, iter: [N], strides: [[1, 0]], origin: [0, 1]}");
  return y;
}

std::map<std::string, Matrix> ropeTables(const RopeParams& p) {
  checkParams(p);
  const int64_t h = p.headDim / 2, n = int64_t(p.positions.size()) * p.heads;
  Matrix c{n, h, {}}, s{n, h, {}};
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < h; ++i) {
      const double angle = double(p.positions[size_t(r / p.heads)]) * std::pow(p.theta, -2.0 * double(i) / double(p.headDim));
      c.data.push_back(floatToBits(float(p.scale * std::cos(angle))));
      s.data.push_back(floatToBits(float(p.scale * std::sin(angle))));
    }
  return {{"cos", c}, {"sin", s}};
}

}  // namespace stepgen
