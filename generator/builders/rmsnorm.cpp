// buildRmsNormGraph: RMSNorm as a STeP graph, assembled line by line in a fixed order.
#include "builders/rmsnorm.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/fp.hpp"
#include "support/diag.hpp"

namespace stepgen {

namespace {

void checkParams(const RmsNormParams& p) {
  auto bad = [](const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "rmsnorm: " + msg); };
  if (p.rows < 1) bad(fmt::format("rows must be >= 1, got {}", p.rows));
  if (p.dim < 1) bad(fmt::format("dim must be >= 1, got {}", p.dim));
  if (!std::isfinite(p.eps) || p.eps < 0) bad(fmt::format("eps must be a finite number >= 0, got {}", p.eps));
}

}  // namespace

std::string buildRmsNormGraph(const RmsNormParams& p) {
  checkParams(p);
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# RMSNorm: out = x * rsqrt(mean(x^2) + eps) * w, row by row (docs/graph_format.md#rmsnorm).");
  line("# Written by stepgen (buildRmsNormGraph). One tile is one row; x is read twice from");
  line("# off-chip (for the sum of squares and for the scaling), so no row waits on chip.");
  line("# inv_d and eps hold 1/D and eps in every word.");
  line("stepgraph: rmsnorm");
  line(fmt::format("symbols: {{B: {}, D: {}}}", p.rows, p.dim));
  line("tensors:");
  line("  x:     {shape: [B, D], role: input}");
  line("  w:     {shape: [1, D], role: input}");
  line("  inv_d: {shape: [1, D], role: input}");
  line("  eps:   {shape: [1, D], role: input}");
  line("  out:   {shape: [B, D], role: output}");
  line("ops:");
  line("  - {name: load_x, op: LinearOffChipLoad, tensor: x, tile: [1, D], iter: [B], strides: [[1, 0]], out: xs}");
  line("  - {name: bcast_x, op: Broadcast, in: xs, out: [xa, xb]}");
  line("  - {name: zip_sq, op: Zip, in: [xa, xb], out: xx}");
  line("  - {name: square, op: Map, fn: mul, in: xx, out: sq}");
  line("  - {name: row_sum, op: Map, fn: rowsum, in: sq, out: ss}");
  line("  - {name: load_inv_d, op: LinearOffChipLoad, tensor: inv_d, tile: [1, D], iter: [B], strides: [[0, 0]], out: ids}");
  line("  - {name: zip_mean, op: Zip, in: [ss, ids], out: sid}");
  line("  - {name: mean, op: Map, fn: mul, in: sid, out: ms}");
  line("  - {name: load_eps, op: LinearOffChipLoad, tensor: eps, tile: [1, D], iter: [B], strides: [[0, 0]], out: es}");
  line("  - {name: zip_eps, op: Zip, in: [ms, es], out: mes}");
  line("  - {name: add_eps, op: Map, fn: add, in: mes, out: me}");
  line("  - {name: inv_rms, op: Map, fn: rsqrt, in: me, out: r}");
  line("  - {name: load_x2, op: LinearOffChipLoad, tensor: x, tile: [1, D], iter: [B], strides: [[1, 0]], out: xs2}");
  line("  - {name: zip_norm, op: Zip, in: [xs2, r], out: xr}");
  line("  - {name: normalize, op: Map, fn: mul, in: xr, out: n}");
  line("  - {name: load_w, op: LinearOffChipLoad, tensor: w, tile: [1, D], iter: [B], strides: [[0, 0]], out: ws}");
  line("  - {name: zip_w, op: Zip, in: [n, ws], out: nw}");
  line("  - {name: scale, op: Map, fn: mul, in: nw, out: o}");
  line("  - {name: store_out, op: LinearOffChipStore, in: o, tensor: out, iter: [B], strides: [[1, 0]]}");
  return y;
}

std::map<std::string, Matrix> rmsNormFixedInputs(const RmsNormParams& p) {
  checkParams(p);
  std::map<std::string, Matrix> m;
  m["inv_d"] = Matrix{1, p.dim, std::vector<uint32_t>(size_t(p.dim), floatToBits(float(1.0 / double(p.dim))))};
  m["eps"] = Matrix{1, p.dim, std::vector<uint32_t>(size_t(p.dim), floatToBits(p.eps))};
  return m;
}

}  // namespace stepgen
