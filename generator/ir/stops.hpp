#pragma once
// Stop-level rewrite rules of the STeP shape operators (docs/step_semantics.md#stop-rules),
// as pure functions on the stop level s carried by one element
// (0 = no stop, k = S_k). Used by the model (generator/model) and as golden vectors for the RTL
// stop-level maps (docs/hardware.md section 2). Header-only.
//
// Convention: an element of a rank-N stream of shape [D_N, ..., D_0] carries stop level k
// when it is the last element of its dims 0..k-1 (and not of dim k), with k capped at N:
// D_N counts the tensors and is closed by the done token, not by a stop. See stopsOfShape.
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace stepgen {

/// Promote at rank r (insert a size-1 dimension at position r, docs/step_semantics.md#promote): a stop
/// s >= r is raised to s + 1, a stop s < r is unchanged. With r = 0 every element gains S1
/// and every S1 becomes S2 (stop 0 -> 1, 1 -> 2). Pre: r >= 0, s >= 0.
inline int promoteStop(int s, int r) { return s >= r ? s + 1 : s; }

/// Flatten dims [lo, hi] into one (docs/step_semantics.md#flatten): s <= lo stays; lo < s <= hi becomes
/// lo (a plain element when lo = 0); s > hi becomes s - (hi - lo). Pre: 0 <= lo <= hi.
inline int flattenStop(int s, int lo, int hi) {
  if (s <= lo) return s;
  if (s <= hi) return lo;
  return s - (hi - lo);
}

/// What a reducing operator does with one incoming element: emit an output element or not,
/// and the stop level that output carries.
struct StopSplit {
  bool emit = false;  ///< an output element is produced after this input element
  int outStop = 0;    ///< its stop level (0 = none); meaningful only when emit
};
inline bool operator==(const StopSplit& a, const StopSplit& b) {
  return a.emit == b.emit && (!a.emit || a.outStop == b.outStop);
}

/// Accum over the inner b dims (docs/step_semantics.md#accum): s < b is absorbed into the running
/// result (no output); s = b emits the result with no stop; s > b emits it with stop s - b.
inline StopSplit accumStop(int s, int b) {
  if (s < b) return {false, 0};
  return {true, s - b};
}

/// Bufferize at rank b (docs/step_semantics.md#bufferize): elements fill the buffer until a stop >= b;
/// then a reference is emitted with stop s - b (none if s = b). Same rule as accumStop.
inline StopSplit bufferizeStop(int s, int b) { return accumStop(s, b); }

/// RepeatStatic n (docs/step_semantics.md#repeatstatic): each element is emitted n times; copies 1..n-1 carry
/// no stop and the last copy carries the incoming stop raised by one level (s + 1: the
/// repeat adds an innermost dimension, so the last copy at least closes it with S1).
inline int repeatLastStop(int s) { return s + 1; }

/// The stop level of every element, in stream order, of a regular stream of the given
/// static shape [D_N, ..., D_0] (outermost first, docs/step_semantics.md#stops). E.g. [1, 2, 3]
/// (one 2x3 matrix, `a b c S1 d e f S2 D`) -> {0,0,1,0,0,2}; [2, 3] -> {0,0,1,0,0,1}.
/// A zero dimension yields no elements. Throws std::invalid_argument on an empty shape
/// or a negative dimension.
inline std::vector<int> stopsOfShape(const std::vector<int64_t>& shape) {
  if (shape.empty()) throw std::invalid_argument("stopsOfShape: empty shape");
  int64_t total = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("stopsOfShape: negative dimension");
    total *= d;
  }
  const int rank = int(shape.size()) - 1;
  std::vector<int> out;
  out.reserve(size_t(total));
  for (int64_t flat = 0; flat < total; ++flat) {
    // Count trailing dims (innermost first) at their last index, up to the rank.
    int level = 0;
    int64_t rest = flat;
    for (int k = 0; k < rank; ++k) {
      int64_t d = shape[size_t(rank - k)];
      if (rest % d != d - 1) break;
      rest /= d;
      ++level;
    }
    out.push_back(level);
  }
  return out;
}

}  // namespace stepgen
