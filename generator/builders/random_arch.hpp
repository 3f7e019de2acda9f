#pragma once
// buildRandomArch: seeded random fabrics for the random-graph study (docs/random_graphs.md).
#include <cstdint>
#include <string>

namespace stepgen {

/// The architecture YAML (arch/README.md) of `seed` (std::mt19937), named random_a<seed>:
/// a grid of 3..6 columns by 2..4 rows with address generators down both edge columns and
/// compute units inside (up to two of them memory units instead, one compute unit at
/// least; an even seed with a memory unit gets three); 1, 2 or 4 contexts; link reach 2..4
/// and FIFO depth 2 (the study varies it);
/// 4, 8 or 16 MAC lanes over 512-bit beats and arch/default.yaml's functions (with
/// `partition`, `merge`, `select`, `sub`, the three scans, `rowscale`, `matmul_t`,
/// `parallelize` and `expand`, the dynamic-tile datapath, and the route mode for memory
/// units, on even seeds; with the attention functions `exp`, `recip`, `rowmax`, `rowsum`,
/// `accum_max` and `accum_rescale` too, the attention datapath, on seeds 2 mod 4), number
/// format and 64 KiB buffers; 1, 2 or 4 DRAM channels with latency 20..80 cycles,
/// initiation interval 1 or 2, start-up 0 or 100 cycles and 8, 16 or 32 beats in flight per
/// address generator. Every draw is within the schema's limits, so
/// the text always loads. Deterministic: the same seed gives the same bytes.
std::string buildRandomArch(uint32_t seed);

}  // namespace stepgen
