// buildLinearGraph: the text is assembled line by line in a fixed order (reproducible).
#include "builders/linear.hpp"

#include <fmt/format.h>

#include "support/diag.hpp"

namespace stepgen {

std::string buildLinearGraph(const LinearParams& p) {
  auto bad = [](const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "linear: " + msg); };
  const std::pair<const char*, int64_t> sizes[] = {{"rows", p.rows},       {"inputs", p.inputs},      {"k_tiles", p.kTiles},
                                                   {"k_tile", p.kTile},    {"out_tiles", p.outTiles}, {"out_tile", p.outTile}};
  for (const auto& [name, v] : sizes)
    if (v < 1) bad(fmt::format("{} must be >= 1, got {}", name, v));
  if (p.wRowTile < 0 || p.wColTile < 0) bad("a weight origin is negative");
  if (p.residual && p.outTiles > 1) bad("a residual needs one output tile");
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# out = sum_i x_i W_i^T (+ res): the tokens in one tile, K tiles accumulated.");
  line("# Written by stepgen (buildLinearGraph).");
  line("stepgraph: linear");
  line(fmt::format("symbols: {{B: {}, J: {}, C: {}, KT: {}, TK: {}, N: {}}}", p.rows, p.outTiles, p.outTile, p.kTiles,
                   p.kTile, p.inputs));
  line("tensors:");
  for (int64_t i = 0; i < p.inputs; ++i)
    line(fmt::format("  x{}: {{shape: {}, role: input}}", i, p.kAlongRows ? "[KT*B, TK]" : "[B, KT*TK]"));
  line("  w: {shape: [J*C, N*KT*TK], role: input}");
  if (p.residual) line("  res: {shape: [B, C], role: input}");
  line(fmt::format("  out: {{shape: {}, role: output}}", p.outColumns ? "[B, J*C]" : "[J*B, C]"));
  line("ops:");
  const char* xStrides = p.kAlongRows ? "[[0, 0], [1, 0]]" : "[[0, 0], [0, 1]]";
  std::string sum;
  for (int64_t i = 0; i < p.inputs; ++i) {
    line(fmt::format("  - {{name: load_x{0}, op: LinearOffChipLoad, tensor: x{0}, tile: [B, TK], iter: [J, KT], strides: {1}, "
                     "out: xs{0}}}", i, xStrides));
    line(fmt::format("  - {{name: load_w{0}, op: LinearOffChipLoad, tensor: w, tile: [C, TK], iter: [J, KT], "
                     "strides: [[1, 0], [0, 1]], origin: [{1}, {2}], out: ws{0}}}", i, p.wRowTile, p.wColTile + i * p.kTiles));
    line(fmt::format("  - {{name: zip_xw{0}, op: Zip, in: [xs{0}, ws{0}], out: xw{0}}}", i));
    line(fmt::format("  - {{name: mm{0}, op: Map, fn: matmul_t, in: xw{0}, out: pp{0}}}", i));
    line(fmt::format("  - {{name: acc{0}, op: Accum, fn: add, b: 1, in: pp{0}, out: p{0}}}", i));
    if (i == 0) {
      sum = "p0";
      continue;
    }
    line(fmt::format("  - {{name: zip_sum{0}, op: Zip, in: [{1}, p{0}], out: ps{0}}}", i, sum));
    line(fmt::format("  - {{name: sum{0}, op: Map, fn: add, in: ps{0}, out: s{0}}}", i));
    sum = fmt::format("s{}", i);
  }
  if (p.residual) {
    line("  - {name: load_res, op: LinearOffChipLoad, tensor: res, tile: [B, C], iter: [J], strides: [[0, 1]], out: rs}");
    line(fmt::format("  - {{name: zip_res, op: Zip, in: [{}, rs], out: pr}}", sum));
    line("  - {name: add_res, op: Map, fn: add, in: pr, out: o}");
    sum = "o";
  }
  line(fmt::format("  - {{name: store_out, op: LinearOffChipStore, in: {}, tensor: out, tile: [B, C], iter: [J], "
                   "strides: [[{}]]}}", sum, p.outColumns ? "0, 1" : "1, 0"));
  return y;
}

}  // namespace stepgen
