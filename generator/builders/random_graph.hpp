#pragma once
// buildRandomGraph: seeded random well-typed STeP graphs for the random-graph study
// (docs/random_graphs.md): streams of fp32 tiles through loads, Broadcast, Zip, Map (add,
// mul, silu, matmul), Accum and stores, sized to fit a fabric of the given unit counts.
// Its fabrics come from buildRandomArch (random_arch.hpp).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace stepgen {

/// What a random graph may use: its unit budget (address generators for loads and stores,
/// compute units for Map and Accum) and its size limits.
struct RandomGraphLimits {
  int64_t maxAg = 6;      ///< loads + stores
  int64_t maxCu = 7;      ///< Map + Accum ops
  int64_t maxLoads = 3;   ///< input tensors loaded at the start, drawn from 1 .. this
  int64_t maxOuter = 4;   ///< N and M (outer stream dims) drawn from 1 .. this
  int64_t maxRows = 8;    ///< tile rows drawn from the powers of two up to this
  int64_t maxCols = 64;   ///< tile columns drawn from 16, 32, .. up to this (whole 64-byte pieces)
  bool partition = false; ///< the compute units have the partition function (a Partition step may be drawn)
  bool merge = false;     ///< ... and merge (an EagerMerge may join a Partition's two outputs again)
  /// ... and select, and the graph is mapped whole (a feedback cycle is never cut into
  /// sections): a Partition may deal its rows by a feedback cycle of free signals
  bool feedback = false;
  /// A memory unit has the route mode (memory_unit.route) and the graph is mapped whole: one
  /// Partition may route token rows to experts, padded to tiles and merged (the MoE dispatch)
  bool route = false;
  /// ... and three memory units have it (the route cluster's data and selector twins, the
  /// combine): each step draws the route cluster first one time in two, and it may go on
  /// through a per-expert bias add and a combine cluster (FlatMap, Flatten, Reassemble) back
  /// to token order
  bool combine = false;
  /// The compute units have the dynamic-tile functions sub, scan, scan_max,
  /// scan_max_exclusive, rowscale, matmul_t, parallelize and expand: a binary step may be a
  /// Map(sub) or a Map(scale_rows) by a loaded column, a matmul a matmul_t, one Map(silu) draw
  /// in two a Scan(add | max | max_exclusive, b 1) of an [N, M] stream or a Parallelize of an
  /// [N] stream (N >= 2), and one Accum draw in two an Expand(b 1) of a loaded [N, 1] stream
  /// to an [N, M] stream's stops
  bool dynamic = false;
  /// The compute units have the attention functions exp, recip, rowmax, rowsum, accum_max
  /// and accum_rescale (sg_cu ATTN = 1): one Map(silu) draw in two is a Map(exp | recip |
  /// rowmax | rowsum), and two Accum(add) draws in three an Accum(max) or an
  /// Accum(rescale_add) of the stream zipped with a second one of its type
  bool attention = false;
};

/// The compute-unit functions of RandomGraphLimits::dynamic (arch `compute_unit.functions`).
inline constexpr const char* kDynamicStepFunctions[] = {"sub",      "scan",     "scan_max",    "scan_max_exclusive",
                                                        "rowscale", "matmul_t", "parallelize", "expand"};

/// The compute-unit functions of RandomGraphLimits::attention (arch `compute_unit.functions`).
inline constexpr const char* kAttentionStepFunctions[] = {"exp", "recip", "rowmax", "rowsum", "accum_max",
                                                          "accum_rescale"};

/// One random graph: its YAML text (docs/graph_format.md) and its size.
struct RandomGraph {
  std::string yaml;
  int ops = 0;  ///< operators in `ops:` (Broadcast and Zip included)
  /// The graph has an EagerMerge: its outputs are in arrival order, which the link FIFO
  /// depth may change (model and RTL must still agree at each depth).
  bool arrivalOrder = false;
  /// Files the graph names, to be written beside it: (file name, text), the SelectGen
  /// routing traces (CSV `token,expert_0`).
  std::vector<std::pair<std::string, std::string>> files;
};

/// The graph of `seed` (std::mt19937): one to three loads of input tensors x<i> as streams
/// [N] or [N, M] of [R, C] tiles, then random steps, each a Map(silu) (with `dynamic`, or a
/// Scan(add | max | max_exclusive, b 1) of an [N, M] stream, or a Parallelize of an [N]
/// stream into its even and odd tiles; with `attention`, or a Map(exp | recip | rowmax |
/// rowsum)), a Zip + Map(add | mul, with `dynamic` also sub and
/// scale_rows by a loaded column) of two streams of one type (a Broadcast when only one is
/// at hand), a Zip with a loaded weight tile + Map(matmul) (with `dynamic`, or matmul_t), a
/// detour a + matmul(a, w) (Broadcast of a; it deadlocks where a's tile outgrows the add's
/// FIFO, docs/random_graphs.md), an Accum(add, b 1) of an [N, M] stream (with `attention`,
/// or an Accum(max | rescale_add, b 1); with `dynamic`, or
/// an Expand(b 1) of a loaded [N, 1] stream to its stops), or (with `partition`) a
/// Partition(b 0) of an [N] stream into two by a SelectGen over a random trace, whose
/// outputs (ragged counts) take at most one Map and a store, or (with `merge`) an
/// EagerMerge(b 0) of the two, or of one and a Map(silu) of the other, or (with `feedback`)
/// a Partition(b 0) whose selector is the EagerMerge of its two outputs' Map(select) free
/// signals with 1 or 2 initial tokens each (the dispatch cycle of
/// docs/graph_format.md#feedback-streams), or (with `route`, once; with `combine`, first one
/// step in two) a route cluster on a memory
/// unit: a SelectGen over a random top-k trace, Partition of token rows to 2..4 experts,
/// Reshape(pad) to tiles of 1, 2 or 4 rows, Accum(retile) and EagerMerge, stored as padded
/// rows (the dispatch of `stepgen graph moe --dispatch-only`), or (with `combine`, three times
/// in four) through an AddrGen + RandomOffChipLoad of each expert's bias tile, Promote, Zip,
/// Map(add), Flatten and a combine cluster (Partition, FlatMap(filter_rows), Flatten,
/// Reassemble) back to [N, k] token rows (the graph of `stepgen graph moe`), while the unit
/// budget lasts; every stream left is stored to an output tensor y<i>. Matmul widths are powers of two,
/// tiles whole 64-byte pieces, K at most 64 so that double-buffered operands fit a 64 KiB
/// compute unit. Deterministic: the same seed and limits give the same bytes.
RandomGraph buildRandomGraph(uint32_t seed, const RandomGraphLimits& limits = {});

/// The smallest graph of a failing seed that still fails, and the limits that give it.
struct ReducedGraph {
  RandomGraphLimits limits;
  RandomGraph graph;
  int tries = 0;  ///< calls of the failure predicate
};

/// The reducer: lowers each limit of `start` in turn (compute units to 0, address
/// generators to 2, loads, N and M, tile rows to 1, tile columns to 16) to the smallest value
/// at which `fails(buildRandomGraph(seed, limits))` still holds, and repeats the pass until
/// it changes nothing; so the graph loses operators, symbols and tile sizes while the
/// failure persists. `fails` must hold for `start`; if it does not, `start` is returned.
ReducedGraph reduceRandomGraph(uint32_t seed, const RandomGraphLimits& start,
                               const std::function<bool(const RandomGraph&)>& fails);

}  // namespace stepgen
