// buildSwigluGraph: the SwiGLU layer as a STeP graph (docs/graph_format.md). The text is
// assembled line by line in a fixed order so the output is byte-for-byte reproducible.
#include "builders/swiglu.hpp"

#include <fmt/format.h>

#include "support/diag.hpp"

namespace stepgen {

namespace {

void checkParams(const SwigluParams& p) {
  auto bad = [](const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "swiglu: " + msg); };
  const std::pair<const char*, int64_t> sizes[] = {
      {"batch", p.batch}, {"hidden", p.hidden}, {"ffn", p.ffn}, {"tile_b", p.tileB}, {"tile_f", p.tileF}};
  for (const auto& [name, v] : sizes)
    if (v < 1) bad(fmt::format("{} must be >= 1, got {}", name, v));
  if (p.batch % p.tileB != 0) bad(fmt::format("tile_b {} does not divide batch {}", p.tileB, p.batch));
  if (p.ffn % p.tileF != 0) bad(fmt::format("tile_f {} does not divide ffn {}", p.tileF, p.ffn));
}

}  // namespace

std::string swigluCoreOps(const std::string& gateUpFn) {
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("  - {name: zip_g, op: Zip, in: [x_g, wg_t], out: xwg}");
  line(fmt::format("  - {{name: mm_g, op: Map, fn: {}, in: xwg, out: g}}", gateUpFn));
  line("  - {name: zip_u, op: Zip, in: [x_u, wu_t], out: xwu}");
  line(fmt::format("  - {{name: mm_u, op: Map, fn: {}, in: xwu, out: u}}", gateUpFn));
  line("  - {name: silu_g, op: Map, fn: silu, in: g, out: s}");
  line("  - {name: zip_h, op: Zip, in: [s, u], out: su}");
  line("  - {name: mul_h, op: Map, fn: mul, in: su, out: h}");
  line("  - {name: zip_p, op: Zip, in: [h, wd_t], out: hwd}");
  line("  - {name: mm_p, op: Map, fn: matmul, in: hwd, out: p}");
  line("  - {name: acc_o, op: Accum, fn: add, b: 1, in: p, out: o}");
  return y;
}

std::string buildSwigluGraph(const SwigluParams& p) {
  checkParams(p);
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# SwiGLU FFN layer: out = (silu(x Wg) * (x Wu)) Wd   (docs/step_semantics.md#swiglu-closed-form)");
  line("# Written by stepgen (buildSwigluGraph). Schedule: for each batch tile b, for each F");
  line("# tile f: x tile re-read per F tile, each weight tile read once per batch tile, the");
  line("# partial products p accumulated over the F tiles.");
  line("stepgraph: swiglu");
  line(fmt::format("symbols: {{B: {}, D: {}, F: {}}}", p.batch, p.hidden, p.ffn));
  line(fmt::format("schedule: {{tb: {}, tf: {}}}", p.tileB, p.tileF));
  line("tensors:");
  line("  x:   {shape: [B, D], role: input}");
  line("  wg:  {shape: [D, F], role: input}");
  line("  wu:  {shape: [D, F], role: input}");
  line("  wd:  {shape: [F, D], role: input}");
  line("  out: {shape: [B, D], role: output}");
  line("streams:");
  const char* bf = "[B/tb, F/tf]";
  line(fmt::format("  x_t:  {{shape: {}, tile: [tb, D]}}", bf));
  line(fmt::format("  wg_t: {{shape: {}, tile: [D, tf]}}", bf));
  line(fmt::format("  wu_t: {{shape: {}, tile: [D, tf]}}", bf));
  line(fmt::format("  wd_t: {{shape: {}, tile: [tf, D]}}", bf));
  line(fmt::format("  x_g:  {{shape: {}, tile: [tb, D]}}", bf));
  line(fmt::format("  x_u:  {{shape: {}, tile: [tb, D]}}", bf));
  line(fmt::format("  g:    {{shape: {}, tile: [tb, tf]}}", bf));
  line(fmt::format("  u:    {{shape: {}, tile: [tb, tf]}}", bf));
  line(fmt::format("  s:    {{shape: {}, tile: [tb, tf]}}", bf));
  line(fmt::format("  h:    {{shape: {}, tile: [tb, tf]}}", bf));
  line(fmt::format("  p:    {{shape: {}, tile: [tb, D]}}", bf));
  line("  o:    {shape: [B/tb], tile: [tb, D]}");
  line("ops:");
  auto load = [&](const char* name, const char* tensor, const char* tile, const char* strides, const char* out) {
    line(fmt::format("  - {{name: {}, op: LinearOffChipLoad, tensor: {}, tile: {},", name, tensor, tile));
    line(fmt::format("     iter: {}, strides: {}, out: {}}}", bf, strides, out));
  };
  load("load_x", "x", "[tb, D]", "[[1, 0], [0, 0]]", "x_t");
  load("load_wg", "wg", "[D, tf]", "[[0, 0], [0, 1]]", "wg_t");
  load("load_wu", "wu", "[D, tf]", "[[0, 0], [0, 1]]", "wu_t");
  load("load_wd", "wd", "[tf, D]", "[[0, 0], [1, 0]]", "wd_t");
  line("  - {name: bcast_x, op: Broadcast, in: x_t, out: [x_g, x_u]}");
  y += swigluCoreOps("matmul");
  line("  - {name: store_out, op: LinearOffChipStore, in: o, tensor: out, iter: [B/tb],");
  line("     strides: [[1, 0]]}");
  return y;
}

}  // namespace stepgen
