// Stop-level rewrite rules (docs/step_semantics.md#stop-rules), with golden vectors worked out by hand and
// cross-checked against stopsOfShape of the output shape the operator produces
// (docs/step_semantics.md#operators, docs/graph_format.md).
#include <catch2/catch.hpp>

#include <functional>

#include "ir/stops.hpp"

using namespace stepgen;
using Stops = std::vector<int>;

namespace {
Stops mapStops(const Stops& in, const std::function<int(int)>& f) {
  Stops out;
  for (int s : in) out.push_back(f(s));
  return out;
}
Stops reduceStops(const Stops& in, const std::function<StopSplit(int)>& f) {
  Stops out;
  for (int s : in) {
    StopSplit r = f(s);
    if (r.emit) out.push_back(r.outStop);
  }
  return out;
}
Stops repeatStops(const Stops& in, int n) {
  Stops out;
  for (int s : in) {
    for (int k = 0; k + 1 < n; ++k) out.push_back(0);
    out.push_back(repeatLastStop(s));
  }
  return out;
}
}  // namespace

TEST_CASE("stops: stopsOfShape matches the documented examples", "[stops]") {
  // One 2x3 matrix as a rank-2 stream [1, 2, 3]: a b c S1 d e f S2 D.
  CHECK(stopsOfShape({1, 2, 3}) == Stops{0, 0, 1, 0, 0, 2});
  // Rank 1 [2, 3]: two groups of three, each closed by S1.
  CHECK(stopsOfShape({2, 3}) == Stops{0, 0, 1, 0, 0, 1});
  // Rank 0 [4]: plain elements.
  CHECK(stopsOfShape({4}) == Stops{0, 0, 0, 0});
  // Size-1 inner dims: every element closes them.
  CHECK(stopsOfShape({2, 1, 3}) == Stops{0, 0, 2, 0, 0, 2});
  CHECK(stopsOfShape({2, 3, 0}).empty());
  CHECK_THROWS(stopsOfShape({}));
}

TEST_CASE("stops: Promote", "[stops]") {
  CHECK(promoteStop(0, 0) == 1);
  CHECK(promoteStop(1, 0) == 2);
  CHECK(promoteStop(0, 1) == 0);
  CHECK(promoteStop(1, 1) == 2);
  CHECK(promoteStop(2, 3) == 2);

  // Promote at rank 0 over [2,3]: every element gains S1, the S1s become S2.
  // in  a b c S1 d e f S1        = 0 0 1 0 0 1
  // out a S1 b S1 c S2 d S1 ...  = 1 1 2 1 1 2, i.e. the shape [2, 3, 1].
  Stops in = stopsOfShape({2, 3});
  Stops out = mapStops(in, [](int s) { return promoteStop(s, 0); });
  CHECK(out == Stops{1, 1, 2, 1, 1, 2});
  CHECK(out == stopsOfShape({2, 3, 1}));

  // Promote at rank 1 over [2,3] -> [2, 1, 3]: S1 -> S2, plain elements stay.
  out = mapStops(in, [](int s) { return promoteStop(s, 1); });
  CHECK(out == Stops{0, 0, 2, 0, 0, 2});
  CHECK(out == stopsOfShape({2, 1, 3}));
}

TEST_CASE("stops: Flatten", "[stops]") {
  CHECK(flattenStop(0, 0, 1) == 0);
  CHECK(flattenStop(1, 0, 1) == 0);  // lo = 0: becomes a plain element
  CHECK(flattenStop(2, 0, 1) == 1);
  CHECK(flattenStop(1, 1, 2) == 1);
  CHECK(flattenStop(2, 1, 2) == 1);
  CHECK(flattenStop(3, 1, 2) == 2);
  CHECK(flattenStop(5, 1, 3) == 3);

  // Flatten(0, 1) of [2, 2, 3] -> [2, 6].
  // in  per tensor: 0 0 1 0 0 2   out: 0 0 0 0 0 1
  Stops out = mapStops(stopsOfShape({2, 2, 3}), [](int s) { return flattenStop(s, 0, 1); });
  CHECK(out == Stops{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1});
  CHECK(out == stopsOfShape({2, 6}));

  // Flatten(1, 2) of [2, 2, 2, 3] -> [2, 4, 3].
  // in  per tensor: 0 0 1 0 0 2 0 0 1 0 0 3   out: 0 0 1 0 0 1 0 0 1 0 0 2
  out = mapStops(stopsOfShape({2, 2, 2, 3}), [](int s) { return flattenStop(s, 1, 2); });
  Stops one{0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 2};
  Stops two = one;
  two.insert(two.end(), one.begin(), one.end());
  CHECK(out == two);
  CHECK(out == stopsOfShape({2, 4, 3}));

  // Flatten(0, 1) of [1, 2, 3] -> [1, 6]: 0 0 1 0 0 2 -> 0 0 0 0 0 1.
  CHECK(mapStops(stopsOfShape({1, 2, 3}), [](int s) { return flattenStop(s, 0, 1); }) == Stops{0, 0, 0, 0, 0, 1});
  CHECK(stopsOfShape({1, 6}) == Stops{0, 0, 0, 0, 0, 1});
  // Flatten(1, 2) of [1, 2, 3] -> [2, 3] (merging into the tensor dim): S2 -> S1.
  CHECK(mapStops(stopsOfShape({1, 2, 3}), [](int s) { return flattenStop(s, 1, 2); }) == stopsOfShape({2, 3}));
}

TEST_CASE("stops: Accum", "[stops]") {
  CHECK(accumStop(0, 1) == StopSplit{false, 0});
  CHECK(accumStop(1, 1) == StopSplit{true, 0});
  CHECK(accumStop(2, 1) == StopSplit{true, 1});
  CHECK(accumStop(1, 2) == StopSplit{false, 0});
  CHECK(accumStop(3, 2) == StopSplit{true, 1});
  CHECK(accumStop(0, 0) == StopSplit{true, 0});  // b = 0: identity

  // Accum(b=1) of [2, 3]: 0 0 1 0 0 1 -> (absorb, absorb, emit 0) x 2 -> [2].
  Stops out = reduceStops(stopsOfShape({2, 3}), [](int s) { return accumStop(s, 1); });
  CHECK(out == Stops{0, 0});
  CHECK(out == stopsOfShape({2}));
  // Accum(b=1) of [1, 2, 3]: 0 0 1 0 0 2 -> emit 0, emit 1 -> [1, 2].
  out = reduceStops(stopsOfShape({1, 2, 3}), [](int s) { return accumStop(s, 1); });
  CHECK(out == Stops{0, 1});
  CHECK(out == stopsOfShape({1, 2}));
  // Accum(b=2) of [1, 2, 3]: the S1 is absorbed, the S2 emits with no stop -> [1].
  out = reduceStops(stopsOfShape({1, 2, 3}), [](int s) { return accumStop(s, 2); });
  CHECK(out == Stops{0});
  // Accum(b=1) of [2, 2, 3] (four groups): 0 1 0 1.
  CHECK(reduceStops(stopsOfShape({2, 2, 3}), [](int s) { return accumStop(s, 1); }) == stopsOfShape({2, 2}));
}

TEST_CASE("stops: Bufferize", "[stops]") {
  CHECK(bufferizeStop(0, 1) == StopSplit{false, 0});
  CHECK(bufferizeStop(1, 1) == StopSplit{true, 0});
  CHECK(bufferizeStop(3, 1) == StopSplit{true, 2});
  // Bufferize(b=1) of [2, 2, 3]: a reference per row of 3; per tensor 0 0 1 0 0 2 -> 0 1.
  Stops out = reduceStops(stopsOfShape({2, 2, 3}), [](int s) { return bufferizeStop(s, 1); });
  CHECK(out == Stops{0, 1, 0, 1});
  CHECK(out == stopsOfShape({2, 2}));
  // Bufferize(b=2) of [2, 2, 3]: one reference per 2x3 buffer, plain elements.
  CHECK(reduceStops(stopsOfShape({2, 2, 3}), [](int s) { return bufferizeStop(s, 2); }) == Stops{0, 0});
}

TEST_CASE("stops: RepeatStatic", "[stops]") {
  CHECK(repeatLastStop(0) == 1);
  CHECK(repeatLastStop(1) == 2);
  // RepeatStatic(2) of [2, 3]: 0 0 1 0 0 1 -> (0 1)(0 1)(0 2)(0 1)(0 1)(0 2) = [2, 3, 2].
  Stops out = repeatStops(stopsOfShape({2, 3}), 2);
  CHECK(out == Stops{0, 1, 0, 1, 0, 2, 0, 1, 0, 1, 0, 2});
  CHECK(out == stopsOfShape({2, 3, 2}));
  // RepeatStatic(3) of [1, 2, 1] (stops 1 2): 0 0 2 0 0 3 = [1, 2, 1, 3].
  out = repeatStops(stopsOfShape({1, 2, 1}), 3);
  CHECK(out == Stops{0, 0, 2, 0, 0, 3});
  CHECK(out == stopsOfShape({1, 2, 1, 3}));
}
