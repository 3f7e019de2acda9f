// buildDecodeAttentionGraph: the text is assembled line by line in a fixed order so the
// output is byte-for-byte reproducible.
#include "builders/attention.hpp"

#include <fmt/format.h>

#include <functional>
#include <vector>

#include "support/diag.hpp"

namespace stepgen {

namespace {

// Throws G-120 for sizes the graphs cannot have.
void checkParams(const AttentionParams& p) {
  auto bad = [](const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "attention: " + msg); };
  const std::pair<const char*, int64_t> sizes[] = {
      {"kv", p.kv}, {"head_dim", p.headDim}, {"kv_tile", p.kvTile}, {"queries", p.queries}};
  for (const auto& [name, v] : sizes)
    if (v < 1) bad(fmt::format("{} must be >= 1, got {}", name, v));
  if (p.kv % p.kvTile != 0) bad(fmt::format("kv_tile {} does not divide kv {}", p.kvTile, p.kv));
  if (p.valid < 0 || p.valid > p.kv) bad(fmt::format("valid {} is outside 0 .. kv {}", p.valid, p.kv));
}

bool isMasked(const AttentionParams& p) { return p.valid > 0 && p.valid < p.kv; }

// The lines both graphs share: symbols, tensors, and the scores s (q K^T, plus the mask).
void head(const AttentionParams& p, const std::function<void(const std::string&)>& line, bool ones) {
  const bool masked = isMasked(p);
  if (masked) line(fmt::format("# The cache holds {} real tokens of {}: the mask adds -inf to the scores of the rest.", p.valid, p.kv));
  line(fmt::format("symbols: {{L: {}, D: {}, G: {}}}", p.kv, p.headDim, p.queries));
  line(fmt::format("schedule: {{T: {}}}", p.kvTile));
  line("tensors:");
  line("  q:   {shape: [G, D], role: input}");
  line("  k:   {shape: [L, D], role: input}");
  line("  v:   {shape: [L, D], role: input}");
  if (masked) line("  mask: {shape: [G, L], role: input}");
  if (ones) line("  ones: {shape: [G, D], role: input}");
  line("  out: {shape: [G, D], role: output}");
  line("ops:");
  line("  - {name: load_q, op: LinearOffChipLoad, tensor: q, tile: [G, D], iter: [1, L/T], strides: [[0, 0], [0, 0]], out: qs}");
  line("  - {name: load_k, op: LinearOffChipLoad, tensor: k, tile: [T, D], iter: [1, L/T], strides: [[0, 0], [1, 0]], out: ks}");
  line("  - {name: zip_qk, op: Zip, in: [qs, ks], out: qk}");
  if (masked) {
    line("  - {name: scores, op: Map, fn: matmul_t, in: qk, out: s_raw}");
    line("  - {name: load_mask, op: LinearOffChipLoad, tensor: mask, tile: [G, T], iter: [1, L/T], strides: [[0, 0], [0, 1]], out: masks}");
    line("  - {name: zip_mask, op: Zip, in: [s_raw, masks], out: smask}");
    line("  - {name: apply_mask, op: Map, fn: add, in: smask, out: s}");
  } else {
    line("  - {name: scores, op: Map, fn: matmul_t, in: qk, out: s}");
  }
}

}  // namespace

std::string singlePassCore(const std::string& sfx, const std::string& loadOnes, const std::string& loadV) {
  // Every op and stream name ends in `$`, the region suffix.
  std::vector<std::string> ls = {
      "  - {name: bcast_s$, op: Broadcast, in: s$, out: [s_max$, s_p$]}",
      "  - {name: row_max$, op: Map, fn: rowmax, in: s_max$, out: r$}",
      "  - {name: bcast_r$, op: Broadcast, in: r$, out: [r_run$, r_prev$]}",
      "  - {name: run_max$, op: Scan, fn: max, b: 1, in: r_run$, out: m$}",
      "  - {name: prev_max$, op: Scan, fn: max_exclusive, b: 1, in: r_prev$, out: mp$}",
      "  - {name: bcast_m$, op: Broadcast, in: m$, out: [m_s$, m_a$]}",
      "  - {name: zip_sm$, op: Zip, in: [s_p$, m_s$], out: sm$}",
      "  - {name: shift$, op: Map, fn: sub, in: sm$, out: d$}",
      "  - {name: expo$, op: Map, fn: exp, in: d$, out: p$}",
      "  - {name: zip_mm$, op: Zip, in: [mp$, m_a$], out: mm$}",
      "  - {name: max_step$, op: Map, fn: sub, in: mm$, out: dm$}",
      "  - {name: rescale$, op: Map, fn: exp, in: dm$, out: al$}",
      "  - {name: bcast_al$, op: Broadcast, in: al$, out: [al_l$, al_o$]}",
      "  - {name: bcast_p$, op: Broadcast, in: p$, out: [p_l$, p_v$]}",
      "  - {name: row_sum$, op: Map, fn: rowsum, in: p_l$, out: ps$}",
      "  - {name: zip_l$, op: Zip, in: [ps$, al_l$], out: psa$}",
      "  - {name: sum_l$, op: Accum, fn: rescale_add, b: 1, in: psa$, out: l$}",
      "  - {name: inv_l$, op: Map, fn: recip, in: l$, out: rl$}",
      "  - {name: buf_al$, op: Bufferize, b: 0, in: al_o$, out: al_ref$}",
      "  - {name: replay_al$, op: Streamify, repeat: 1, in: al_ref$, out: al_rep$}",
      "  - {name: flat_al$, op: Flatten, lo: 0, hi: 1, in: al_rep$, out: al_b$}"};
  const bool ones = !loadOnes.empty();
  if (ones) {
    ls.push_back(loadOnes);
    ls.push_back("  - {name: zip_wide$, op: Zip, in: [os$, al_b$], out: oal$}");
    ls.push_back("  - {name: widen$, op: Map, fn: scale_rows, in: oal$, out: al_w$}");
  }
  ls.push_back(loadV);
  for (const char* l : {"  - {name: zip_pv$, op: Zip, in: [p_v$, vs$], out: pvs$}",
                        "  - {name: pv$, op: Map, fn: matmul, in: pvs$, out: o_t$}",
                        ones ? "  - {name: zip_o$, op: Zip, in: [o_t$, al_w$], out: oa$}"
                             : "  - {name: zip_o$, op: Zip, in: [o_t$, al_b$], out: oa$}",
                        "  - {name: acc_o$, op: Accum, fn: rescale_add, b: 1, in: oa$, out: o$}",
                        "  - {name: zip_out$, op: Zip, in: [o$, rl$], out: orl$}",
                        "  - {name: normalize$, op: Map, fn: scale_rows, in: orl$, out: res$}"})
    ls.push_back(l);
  std::string y;
  for (std::string l : ls) {
    for (size_t at = l.find('$'); at != std::string::npos; at = l.find('$', at + sfx.size())) l.replace(at, 1, sfx);
    y += l + "\n";
  }
  return y;
}

std::string buildSinglePassAttention(const AttentionParams& p) {
  checkParams(p);
  const bool ones = p.kvTile != p.headDim;
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# Decode attention of one head: out = softmax(q K^T) V, q already scaled by 1/sqrt(D).");
  line("# Written by stepgen (buildSinglePassAttention). One pass over the L/T score tiles with");
  line("# the online-softmax rescale: running max m_j, p_j = exp(s_j - m_j), alpha_j =");
  line("# exp(m_{j-1} - m_j); l and o accumulate as acc * alpha_j + new (Accum rescale_add);");
  line("# out = o / l. The alpha tiles for o wait in a memory unit while p_j V_j is computed.");
  line("stepgraph: decode_attention_single_pass");
  head(p, line, ones);
  const std::string loadOnes =
      "  - {name: load_ones, op: LinearOffChipLoad, tensor: ones, tile: [G, D], iter: [1, L/T], strides: [[0, 0], [0, 0]], out: os}";
  const std::string loadV =
      "  - {name: load_v, op: LinearOffChipLoad, tensor: v, tile: [T, D], iter: [1, L/T], strides: [[0, 0], [1, 0]], out: vs}";
  y += singlePassCore("", ones ? loadOnes : "", loadV);
  line("  - {name: store_out, op: LinearOffChipStore, in: res, tensor: out, iter: [1], strides: [[1, 0]]}");
  return y;
}

std::string buildDecodeAttentionGraph(const AttentionParams& p) {
  if (p.singlePass) return buildSinglePassAttention(p);
  checkParams(p);
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# Decode attention of one head: out = softmax(q K^T) V, q already scaled by 1/sqrt(D).");
  line("# Written by stepgen (buildDecodeAttentionGraph). Two passes over the L/T score tiles:");
  line("# the row max m first, then p = exp(s - m), its sum l, and out = sum_j (p_j / l) V_j;");
  line("# the score and probability tiles wait in memory units (Bufferize) for m and l.");
  line("stepgraph: decode_attention");
  head(p, line, false);
  line("  - {name: bcast_s, op: Broadcast, in: s, out: [s_max, s_keep]}");
  line("  - {name: row_max, op: Map, fn: rowmax, in: s_max, out: sm}");
  line("  - {name: max_all, op: Accum, fn: max, b: 1, in: sm, out: m}");
  line("  - {name: promote_m, op: Promote, b: 1, in: m, out: m1}");
  line("  - {name: buf_s, op: Bufferize, b: 1, in: s_keep, out: s_ref}");
  line("  - {name: replay_s, op: Streamify, repeat: 1, in: s_ref, out: s_rep}");
  line("  - {name: flat_s, op: Flatten, lo: 0, hi: 1, in: s_rep, out: sb}");
  line("  - {name: bcast_sb, op: Broadcast, in: sb, out: [sb_ref, sb_val]}");
  line("  - {name: expand_m, op: Expand, b: 1, in: [m1, sb_ref], out: mx}");
  line("  - {name: zip_sm, op: Zip, in: [sb_val, mx], out: smx}");
  line("  - {name: shift, op: Map, fn: sub, in: smx, out: d}");
  line("  - {name: expo, op: Map, fn: exp, in: d, out: pe}");
  line("  - {name: bcast_p, op: Broadcast, in: pe, out: [p_sum, p_keep]}");
  line("  - {name: row_sum, op: Map, fn: rowsum, in: p_sum, out: ps}");
  line("  - {name: sum_all, op: Accum, fn: add, b: 1, in: ps, out: l}");
  line("  - {name: inv_l, op: Map, fn: recip, in: l, out: r}");
  line("  - {name: promote_r, op: Promote, b: 1, in: r, out: r1}");
  line("  - {name: buf_p, op: Bufferize, b: 1, in: p_keep, out: p_ref}");
  line("  - {name: replay_p, op: Streamify, repeat: 1, in: p_ref, out: p_rep}");
  line("  - {name: flat_p, op: Flatten, lo: 0, hi: 1, in: p_rep, out: pb}");
  line("  - {name: bcast_pb, op: Broadcast, in: pb, out: [pb_ref, pb_val]}");
  line("  - {name: expand_r, op: Expand, b: 1, in: [r1, pb_ref], out: rx}");
  line("  - {name: zip_pr, op: Zip, in: [pb_val, rx], out: prx}");
  line("  - {name: normalize, op: Map, fn: mul, in: prx, out: w}");
  line("  - {name: load_v, op: LinearOffChipLoad, tensor: v, tile: [T, D], iter: [1, L/T], strides: [[0, 0], [1, 0]], out: vs}");
  line("  - {name: zip_wv, op: Zip, in: [w, vs], out: wv}");
  line("  - {name: pv, op: Map, fn: matmul, in: wv, out: o_t}");
  line("  - {name: acc_o, op: Accum, fn: add, b: 1, in: o_t, out: o}");
  line("  - {name: store_out, op: LinearOffChipStore, in: o, tensor: out, iter: [1], strides: [[1, 0]]}");
  return y;
}

Matrix attentionOnes(const AttentionParams& p) {
  return Matrix{p.queries, p.headDim, std::vector<uint32_t>(size_t(p.queries * p.headDim), 0x3F800000u)};
}

std::map<std::string, Matrix> attentionFixedInputs(const AttentionParams& p) {
  std::map<std::string, Matrix> m;
  if (isMasked(p)) m["mask"] = attentionMask(p);
  if (p.singlePass && p.kvTile != p.headDim) m["ones"] = attentionOnes(p);
  return m;
}

Matrix attentionMask(const AttentionParams& p) {
  Matrix m{p.queries, p.kv, {}};
  for (int64_t r = 0; r < p.queries; ++r)
    for (int64_t c = 0; c < p.kv; ++c) m.data.push_back(c < p.valid ? 0u : 0xFF800000u);
  return m;
}

}  // namespace stepgen
