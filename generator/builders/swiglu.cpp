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

std::string swigluCoreOps(const std::string& gateUpFn, const std::string& sfx) {
  std::string y;
  auto line = [&](const std::string& s) { y += fmt::format(s + "\n", fmt::arg("s", sfx)); };
  line("  - {{name: zip_g{s}, op: Zip, in: [x_g{s}, wg_t{s}], out: xwg{s}}}");
  line("  - {{name: mm_g{s}, op: Map, fn: " + gateUpFn + ", in: xwg{s}, out: g{s}}}");
  line("  - {{name: zip_u{s}, op: Zip, in: [x_u{s}, wu_t{s}], out: xwu{s}}}");
  line("  - {{name: mm_u{s}, op: Map, fn: " + gateUpFn + ", in: xwu{s}, out: u{s}}}");
  line("  - {{name: silu_g{s}, op: Map, fn: silu, in: g{s}, out: s{s}}}");
  line("  - {{name: zip_h{s}, op: Zip, in: [s{s}, u{s}], out: su{s}}}");
  line("  - {{name: mul_h{s}, op: Map, fn: mul, in: su{s}, out: h{s}}}");
  line("  - {{name: zip_p{s}, op: Zip, in: [h{s}, wd_t{s}], out: hwd{s}}}");
  line("  - {{name: mm_p{s}, op: Map, fn: matmul, in: hwd{s}, out: p{s}}}");
  line("  - {{name: acc_o{s}, op: Accum, fn: add, b: 1, in: p{s}, out: o{s}}}");
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
  y += swigluCoreOps("matmul", "");
  line("  - {name: store_out, op: LinearOffChipStore, in: o, tensor: out, iter: [B/tb],");
  line("     strides: [[1, 0]]}");
  return y;
}

std::string buildSwigluStack(const SwigluParams& p, int layers) {
  checkParams(p);
  if (layers < 1) throw DiagError("G-120", SourceLoc{}, fmt::format("mlp: layers must be >= 1, got {}", layers));
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line(fmt::format("# A stack of {} SwiGLU FFN layers: x_(l+1) = (silu(x_l Wg_l) * (x_l Wu_l)) Wd_l", layers));
  line("# (docs/step_semantics.md#swiglu-closed-form). Written by stepgen (buildSwigluStack).");
  line("# Layer l uses the SwiGLU schedule with suffix _l; the output tiles o_l of one layer are");
  line("# repeated F/tf times (RepeatStatic on a memory unit) to become the next layer's x tiles.");
  line(fmt::format("stepgraph: mlp{}", layers));
  line(fmt::format("symbols: {{B: {}, D: {}, F: {}}}", p.batch, p.hidden, p.ffn));
  line(fmt::format("schedule: {{tb: {}, tf: {}}}", p.tileB, p.tileF));
  line("tensors:");
  line("  x:   {shape: [B, D], role: input}");
  for (int l = 0; l < layers; ++l) {
    line(fmt::format("  wg_{0}: {{shape: [D, F], role: input}}", l));
    line(fmt::format("  wu_{0}: {{shape: [D, F], role: input}}", l));
    line(fmt::format("  wd_{0}: {{shape: [F, D], role: input}}", l));
  }
  line("  out: {shape: [B, D], role: output}");
  line("streams:");
  const char* bf = "[B/tb, F/tf]";
  for (int l = 0; l < layers; ++l) {
    line(fmt::format("  x_t_{}:  {{shape: {}, tile: [tb, D]}}", l, bf));
    line(fmt::format("  g_{}:    {{shape: {}, tile: [tb, tf]}}", l, bf));
    line(fmt::format("  h_{}:    {{shape: {}, tile: [tb, tf]}}", l, bf));
    line(fmt::format("  o_{}:    {{shape: [B/tb], tile: [tb, D]}}", l));
  }
  line("ops:");
  auto load = [&](const std::string& name, const std::string& tensor, const char* tile, const char* strides,
                  const std::string& out) {
    line(fmt::format("  - {{name: {}, op: LinearOffChipLoad, tensor: {}, tile: {},", name, tensor, tile));
    line(fmt::format("     iter: {}, strides: {}, out: {}}}", bf, strides, out));
  };
  load("load_x", "x", "[tb, D]", "[[1, 0], [0, 0]]", "x_t_0");
  for (int l = 0; l < layers; ++l) {
    const std::string s = fmt::format("_{}", l);
    if (l > 0)  // the previous layer's output tiles, once per F tile
      line(fmt::format("  - {{name: rep_x{0}, op: RepeatStatic, n: F/tf, in: o_{1}, out: x_t{0}}}", s, l - 1));
    load("load_wg" + s, "wg" + s, "[D, tf]", "[[0, 0], [0, 1]]", "wg_t" + s);
    load("load_wu" + s, "wu" + s, "[D, tf]", "[[0, 0], [0, 1]]", "wu_t" + s);
    load("load_wd" + s, "wd" + s, "[tf, D]", "[[0, 0], [1, 0]]", "wd_t" + s);
    line(fmt::format("  - {{name: bcast_x{0}, op: Broadcast, in: x_t{0}, out: [x_g{0}, x_u{0}]}}", s));
    y += swigluCoreOps("matmul", s);
  }
  line(fmt::format("  - {{name: store_out, op: LinearOffChipStore, in: o_{}, tensor: out, iter: [B/tb],", layers - 1));
  line("     strides: [[1, 0]]}");
  return y;
}

}  // namespace stepgen
