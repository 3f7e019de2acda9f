// buildKvAppendGraph: the KV-cache append as a STeP graph, assembled line by line.
#include "builders/kv_append.hpp"

#include <fmt/format.h>

#include "ir/graph.hpp"
#include "support/diag.hpp"

namespace stepgen {

namespace {

void checkParams(const KvAppendParams& p) {
  auto bad = [](const std::string& msg) { throw DiagError("G-120", SourceLoc{}, "kv-append: " + msg); };
  if (p.lengths.empty()) bad("needs at least one request");
  if (p.capacity < 1) bad(fmt::format("capacity must be >= 1, got {}", p.capacity));
  for (int64_t n : p.lengths)
    if (n < 0 || n >= p.capacity) bad(fmt::format("length {} leaves no free cache row of {} (0 .. {})", n, p.capacity, p.capacity - 1));
  if (p.headDim < 16 || p.headDim % 16) bad(fmt::format("head_dim must be a multiple of 16 (whole 64-byte rows), got {}", p.headDim));
}

}  // namespace

std::string buildKvAppendGraph(const KvAppendParams& p) {
  checkParams(p);
  std::string y;
  auto line = [&](const std::string& s) { y += s + "\n"; };
  line("# KV-cache append of one decode step (docs/graph_format.md#state-tensors). Written by stepgen");
  line("# (buildKvAppendGraph). Request b's new row goes to row b*L + len_b of the cache k (pos word 0);");
  line("# k is state, so its read-back runs after the append.");
  line("stepgraph: kv_append");
  line(fmt::format("symbols: {{B: {}, D: {}, L: {}}}", p.lengths.size(), p.headDim, p.capacity));
  line("tensors:");
  line("  k:     {shape: [B*L, D], role: state}");
  line("  k_new: {shape: [B, D], role: input}");
  line(fmt::format("  pos:   {{shape: [B, {}], role: input}}", kRoutingRowWords));
  line("  kout:  {shape: [B*L, D], role: output}");
  line("ops:");
  line(fmt::format("  - {{name: load_pos, op: LinearOffChipLoad, tensor: pos, tile: [1, {}], iter: [B], strides: [[1, 0]], out: prow}}",
                   kRoutingRowWords));
  line("  - {name: load_new, op: LinearOffChipLoad, tensor: k_new, tile: [1, D], iter: [B], strides: [[1, 0]], out: nrow}");
  line("  - {name: append, op: RandomOffChipStore, tensor: k, index: 0, in: [prow, nrow]}");
  line("  - {name: load_k, op: LinearOffChipLoad, tensor: k, tile: [L, D], iter: [B], strides: [[1, 0]], out: kt}");
  line("  - {name: store_k, op: LinearOffChipStore, tensor: kout, iter: [B], strides: [[1, 0]], in: kt}");
  return y;
}

std::map<std::string, Matrix> kvAppendFixedInputs(const KvAppendParams& p) {
  checkParams(p);
  Matrix pos;
  pos.rows = int64_t(p.lengths.size()), pos.cols = kRoutingRowWords;
  pos.data.assign(size_t(pos.rows * pos.cols), 0);
  for (size_t b = 0; b < p.lengths.size(); ++b) pos.data[b * size_t(pos.cols)] = uint32_t(int64_t(b) * p.capacity + p.lengths[b]);
  return {{"pos", pos}};
}

}  // namespace stepgen
