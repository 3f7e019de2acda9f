#pragma once
// The tiles a LinearOffChipLoad / LinearOffChipStore walks (docs/graph_format.md): element
// (i_k..i_0) of its stream is the tile at tile-row r0 + sum i * dr, tile-col c0 + sum i * dc.
// The functional model and the running error bound (onnx/onnx_error_bound.cpp) read tensors so.
#include <cstdint>
#include <vector>

#include "ir/attrs.hpp"
#include "ir/graph.hpp"

namespace stepgen {

/// A walk: iteration counts (outermost first), a [dr, dc] stride per level, the first tile.
struct TileWalk {
  std::vector<int64_t> iter;
  std::vector<std::vector<int64_t>> strides;
  std::vector<int64_t> origin{0, 0};
};

/// The walk of load or store `op`: its iter, strides and optional origin attributes. Throws
/// DiagError G-130 as attrIntList for a missing or non-integer one.
inline TileWalk tileWalkOf(const StepGraph& g, const Op& op) {
  return {attrIntList(g, op, "iter"), attrIntMatrix(g, op, "strides"),
          op.attrs.count("origin") ? attrIntList(g, op, "origin") : std::vector<int64_t>{0, 0}};
}

/// Calls f(tileRow, tileCol, idx) for every element of `w` in stream order (the last index
/// runs fastest); idx holds the element's index at each level.
template <typename F>
void forEachTile(const TileWalk& w, F f) {
  std::vector<int64_t> idx(w.iter.size(), 0);
  int64_t total = 1;
  for (int64_t n : w.iter) total *= n;
  for (int64_t e = 0; e < total; ++e) {
    int64_t tr = w.origin.at(0), tc = w.origin.at(1);
    for (size_t l = 0; l < idx.size(); ++l) tr += idx[l] * w.strides.at(l).at(0), tc += idx[l] * w.strides.at(l).at(1);
    f(tr, tc, idx);
    for (size_t l = idx.size(); l-- > 0;) {
      if (++idx[l] < w.iter[l]) break;
      idx[l] = 0;
    }
  }
}

}  // namespace stepgen
