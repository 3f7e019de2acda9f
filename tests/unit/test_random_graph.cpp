// The random-graph generator (buildRandomGraph): determinism, the unit budget, that every
// graph of the first 100 seeds compiles onto arch/default.yaml in one section, and, on a seed
// whose graph is read by hand (a Partition by trace, a feedback dispatch, a route cluster),
// the model against plain loops over the inputs.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "builders/random_graph.hpp"
#include "driver/inputs.hpp"
#include "driver/pipeline.hpp"
#include "model/model.hpp"
#include "support/files.hpp"

using namespace stepgen;

namespace {

// The functions that RandomGraphLimits::dynamic asks of the compute units, and partition and
// merge (as the even-seed random fabrics have them).
const std::string kDynamicFns = fmt::format("partition, merge, {}", fmt::join(kDynamicStepFunctions, ", "));

// Word (r, c) of m as an fp32 value.
float word(const Matrix& m, int64_t r, int64_t c) {
  float v;
  std::memcpy(&v, &m.data[size_t(r * m.cols + c)], 4);
  return v;
}

int count(const std::string& text, const std::string& pattern) {
  const std::regex re(pattern);
  return int(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

CompileResult compileText(const std::string& yaml, const std::string& name, bool buffering = true) {
  const auto dir = std::filesystem::temp_directory_path() / name;
  writeFile(dir / "graph.yaml", yaml);
  CompileResult c =
      compileProgram(std::string(STEPGEN_ROOT) + "/arch/default.yaml", (dir / "graph.yaml").string(), 1, true, buffering);
  std::filesystem::remove_all(dir);
  return c;
}

// A model run of a random graph: its inputs and the result.
struct DefaultRun {
  std::map<std::string, Matrix> in;
  ModelResult r;
};
// The model run of graph g of `seed` (its trace files beside it) on the arch text `arch`
// (with `buffering` off: the link FIFOs alone, as a deadlock study runs it).
DefaultRun runOnArch(const RandomGraph& g, uint32_t seed, const std::string& arch, bool buffering = true) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("sg_random_{}", seed);
  writeFile(dir / "arch.yaml", arch);
  writeFile(dir / "graph.yaml", g.yaml);
  for (const auto& [name, body] : g.files) writeFile(dir / name, body);
  const CompileResult c = compileProgram((dir / "arch.yaml").string(), (dir / "graph.yaml").string(), 1, true, buffering);
  DefaultRun d;
  d.in = loadInputs(c.graph, "", seed);
  d.r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, d.in);
  std::filesystem::remove_all(dir);
  return d;
}
// ... on arch/default.yaml with `functions` added to its compute units and, if `route`, the
// route mode on its memory units.
DefaultRun runOnDefault(const RandomGraph& g, uint32_t seed, const std::string& functions, bool route = false) {
  std::string arch = readText(std::string(STEPGEN_ROOT) + "/arch/default.yaml");
  arch = std::regex_replace(arch, std::regex("accum, retile\\]"), "accum, retile, " + functions + "]");
  if (route) arch = std::regex_replace(arch, std::regex("bytes_per_cycle: 64\\}"), "bytes_per_cycle: 64, route: true}");
  return runOnArch(g, seed, arch);
}

// The graph of `seed` with the dynamic-tile steps (RandomGraphLimits::dynamic), and with
// `attention` the attention steps too, which must hold each of `lines`, run by the model on
// arch/default.yaml with those functions; it must not deadlock.
DefaultRun runDynamic(uint32_t seed, std::initializer_list<const char*> lines, bool attention = false) {
  RandomGraphLimits lim;
  lim.partition = lim.merge = lim.dynamic = true;
  lim.attention = attention;
  const RandomGraph g = buildRandomGraph(seed, lim);
  for (const char* l : lines) {
    INFO(l);
    REQUIRE(g.yaml.find(l) != std::string::npos);
  }
  DefaultRun d = runOnDefault(
      g, seed, attention ? kDynamicFns + fmt::format(", {}", fmt::join(kAttentionStepFunctions, ", ")) : kDynamicFns);
  REQUIRE_FALSE(d.r.timing.deadlock);
  return d;
}

}  // namespace

TEST_CASE("random graphs: deterministic, within the unit budget, and mapped whole", "[random]") {
  CHECK(buildRandomGraph(7).yaml == buildRandomGraph(7).yaml);
  CHECK(buildRandomGraph(7).yaml != buildRandomGraph(8).yaml);
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    INFO("seed " << seed);
    const RandomGraph g = buildRandomGraph(seed);
    CHECK(count(g.yaml, "\n  - \\{name: ") == g.ops);
    CHECK(count(g.yaml, "op: LinearOffChip(Load|Store)") <= 6);  // arch/default.yaml: 6 address generators
    CHECK(count(g.yaml, "op: (Map|Accum)") <= 7);                // and 7 compute units
    // The budget fits the fabric whole; only buffering's cuts (a detour whose matmul waits
    // for a whole tile, map/buffering.hpp) may add sections.
    CHECK(compileText(g.yaml, "sg_random_graph", false).mapping.sections == 1);
    const CompileResult c = compileText(g.yaml, "sg_random_graph");
    CHECK((c.mapping.sections == 1 || c.buffers.any()));
  }
}

// Seed 3, read by hand: y0 = x1 and y1 = x2 (a load straight into a store, x1 as [N, M]
// tiles of [4, 32]), y2 = silu(x0). The stores must give back the loaded tensors exactly.
TEST_CASE("random graphs: seed 3's pass-through outputs equal its inputs", "[random]") {
  const RandomGraph g = buildRandomGraph(3);
  REQUIRE(g.yaml.find("{name: store_y0, op: LinearOffChipStore, in: s1,") != std::string::npos);
  REQUIRE(g.yaml.find("{name: store_y1, op: LinearOffChipStore, in: s2,") != std::string::npos);
  const CompileResult c = compileText(g.yaml, "sg_random_graph3");
  const auto in = loadInputs(c.graph, "", 3);
  const ModelResult r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, in);
  REQUIRE_FALSE(r.timing.deadlock);
  CHECK(r.outputs.at("y0").data == in.at("x1").data);
  CHECK(r.outputs.at("y1").data == in.at("x2").data);
  CHECK(r.outputs.at("y0").rows == in.at("x1").rows);
}

// Seed 180 with the partition step, read by hand: x0 [3, 4*64] is loaded as [N, M] tiles of
// [1, 64], summed over M (Accum add) and dealt by the trace 1, 0, 1: y0 gets row 1's sum in
// its row 0, y1 the sums of rows 0 and 2 in its rows 0 and 1; the rest stays 0. The sums
// by a plain loop, in the order Accum adds (m = 0 .. 3).
TEST_CASE("random graphs: a Partition step deals each tile where its trace says", "[random]") {
  RandomGraphLimits lim;
  lim.partition = true;
  const RandomGraph g = buildRandomGraph(180, lim);
  REQUIRE(g.files.size() == 1);
  REQUIRE(g.files[0].second == "token,expert_0\n0,1\n1,0\n2,1\n");
  REQUIRE(g.yaml.find("{name: accum_s1, op: Accum, fn: add, b: 1, in: s0, out: s1}") != std::string::npos);
  REQUIRE(g.yaml.find("{name: store_y0, op: LinearOffChipStore, in: p3,") != std::string::npos);
  REQUIRE(g.yaml.find("{name: store_y1, op: LinearOffChipStore, in: p4,") != std::string::npos);
  const DefaultRun d = runOnDefault(g, 180, "partition");
  const auto& in = d.in;
  const ModelResult& r = d.r;
  REQUIRE_FALSE(r.timing.deadlock);
  const Matrix& x = in.at("x0");
  REQUIRE((x.rows == 3 && x.cols == 256));
  auto rowSum = [&](int64_t row, int64_t col) {
    float acc = 0;
    for (int64_t m = 0; m < 4; ++m) {
      float v;
      std::memcpy(&v, &x.data[size_t(row * 256 + m * 64 + col)], 4);
      acc += v;
    }
    uint32_t bits;
    std::memcpy(&bits, &acc, 4);
    return bits;
  };
  const Matrix &y0 = r.outputs.at("y0"), &y1 = r.outputs.at("y1");
  for (int64_t col = 0; col < 64; ++col) {
    CHECK(y0.data[size_t(col)] == rowSum(1, col));
    CHECK(y1.data[size_t(col)] == rowSum(0, col));
    CHECK(y1.data[size_t(64 + col)] == rowSum(2, col));
    CHECK(y0.data[size_t(64 + col)] == 0u);
    CHECK(y0.data[size_t(128 + col)] == 0u);
    CHECK(y1.data[size_t(128 + col)] == 0u);
  }
}

// The reducer with predicates whose answer is known: one that always holds must end at every
// limit's minimum (one load straight into one store); one that needs a matmul must keep one,
// and lowering any limit one step further must lose it (the reducer's fixed point).
TEST_CASE("random graphs: the reducer shrinks while the failure persists", "[random]") {
  const ReducedGraph all = reduceRandomGraph(5, {}, [](const RandomGraph&) { return true; });
  CHECK(all.limits.maxCu == 0);
  CHECK(all.limits.maxAg == 2);
  CHECK(all.limits.maxLoads == 1);
  CHECK(all.limits.maxOuter == 1);
  CHECK(all.limits.maxRows == 1);
  CHECK(all.limits.maxCols == 16);
  CHECK(all.graph.ops == 2);
  CHECK(all.graph.yaml.find("symbols: {N: 1, M: 1}") != std::string::npos);

  auto hasMatmul = [](const RandomGraph& g) { return g.yaml.find("fn: matmul") != std::string::npos; };
  uint32_t seed = 1;
  while (!hasMatmul(buildRandomGraph(seed))) ++seed;
  const ReducedGraph r = reduceRandomGraph(seed, {}, hasMatmul);
  CHECK(hasMatmul(r.graph));
  CHECK(r.graph.ops <= buildRandomGraph(seed).ops);
  CHECK(r.graph.yaml == buildRandomGraph(seed, r.limits).yaml);
  for (int64_t RandomGraphLimits::*f : {&RandomGraphLimits::maxCu, &RandomGraphLimits::maxAg, &RandomGraphLimits::maxLoads,
                                        &RandomGraphLimits::maxOuter, &RandomGraphLimits::maxRows, &RandomGraphLimits::maxCols}) {
    RandomGraphLimits l = r.limits;
    const bool pow2 = f == &RandomGraphLimits::maxRows || f == &RandomGraphLimits::maxCols;
    const int64_t lowest = f == &RandomGraphLimits::maxAg ? 2 : f == &RandomGraphLimits::maxCols ? 16 : f == &RandomGraphLimits::maxCu ? 0 : 1;
    for (int64_t v = lowest; v < r.limits.*f; v = pow2 ? v * 2 : v + 1) {
      l.*f = v;
      CHECK_FALSE(hasMatmul(buildRandomGraph(seed, l)));
    }
  }
}

// Seed 54 with the feedback step, read by hand: x1 [N*4, 16] (N = 2) is loaded as [4, 16]
// tiles and dealt by a Partition whose selector is the merge of its outputs' free signals;
// y0 and y1 store what each output got. Which output gets which tile is the timing's choice,
// so the check is the dispatch's invariant, by a plain loop over the tiles: every tile of x1
// lands in exactly one output, each output keeps x1's order from its row 0, and the rows
// after its last tile stay 0.
TEST_CASE("random graphs: a feedback dispatch step deals every tile once, in order", "[random]") {
  RandomGraphLimits lim;
  lim.partition = lim.merge = lim.feedback = true;
  const RandomGraph g = buildRandomGraph(54, lim);
  CHECK(g.arrivalOrder);
  REQUIRE(g.yaml.find("{name: part_p3, op: Partition, in: [s1, free2], n: 2, b: 0, out: [p3, p4]}") != std::string::npos);
  REQUIRE(g.yaml.find("{name: merge_free2, op: EagerMerge, b: 0, in: [f7, f10], out: free2}") != std::string::npos);
  REQUIRE(g.yaml.find("{name: store_y0, op: LinearOffChipStore, in: b5,") != std::string::npos);
  REQUIRE(g.yaml.find("{name: store_y1, op: LinearOffChipStore, in: b8,") != std::string::npos);
  CHECK(buildRandomGraph(54, RandomGraphLimits{}).yaml.find("fn: select") == std::string::npos);
  const DefaultRun d = runOnDefault(g, 54, "partition, merge, select");
  const auto& in = d.in;
  const ModelResult& r = d.r;
  REQUIRE_FALSE(r.timing.deadlock);
  const Matrix& x = in.at("x1");
  const Matrix* y[2] = {&r.outputs.at("y0"), &r.outputs.at("y1")};
  REQUIRE((x.rows == 8 && x.cols == 16));
  auto sameTile = [&](const Matrix& m, int64_t mt, int64_t xt) {
    for (int64_t i = 0; i < 64; ++i)
      if (m.data[size_t(mt * 64 + i)] != x.data[size_t(xt * 64 + i)]) return false;
    return true;
  };
  int64_t next[2] = {0, 0};
  for (int64_t t = 0; t < 2; ++t) {
    INFO("tile " << t);
    const bool in0 = sameTile(*y[0], next[0], t), in1 = sameTile(*y[1], next[1], t);
    CHECK(in0 != in1);
    ++next[in0 ? 0 : 1];
  }
  for (int o = 0; o < 2; ++o)
    for (int64_t i = next[o] * 64; i < 128; ++i) CHECK(y[o]->data[size_t(i)] == 0u);
}

// Seed 50 with the route step, read by hand: x1's N = 2 token rows [1, 64] are routed by the
// trace (one expert of 4 per token, k = 1) on a route-mode memory unit, each expert's rows
// padded to tiles of 4 rows and merged in expert order into y0 [8, 64]. The expected rows
// by a plain loop over the trace file the generator wrote: for each expert in order, its
// tokens' rows in token order, then zero rows up to a whole tile.
TEST_CASE("random graphs: a route step groups token rows by expert, padded to tiles", "[random]") {
  RandomGraphLimits lim;
  lim.partition = lim.merge = lim.feedback = lim.route = true;
  const RandomGraph g = buildRandomGraph(50, lim);
  REQUIRE(g.files.size() == 1);
  REQUIRE(g.yaml.find("{name: load_x1, op: LinearOffChipLoad, tensor: x1, tile: [1, 64], iter: [N], strides: [[1, 0]], out: s3}") !=
          std::string::npos);
  REQUIRE(g.yaml.find("{name: part_p6, op: Partition, in: [s3, sel4], n: 4, b: 0, out: [p6, p7, p8, p9]}") != std::string::npos);
  REQUIRE(g.yaml.find("op: Reshape, chunk: 4, b: 0, pad: true") != std::string::npos);
  REQUIRE(g.yaml.find("y0: {shape: [8, 64], role: output}") != std::string::npos);
  CHECK(buildRandomGraph(50, RandomGraphLimits{}).yaml.find("op: Reshape") == std::string::npos);
  const DefaultRun d = runOnDefault(g, 50, "partition, merge, select", true);
  const auto& in = d.in;
  const ModelResult& r = d.r;
  REQUIRE_FALSE(r.timing.deadlock);
  // The trace: "token,expert_0" then one line per token.
  std::vector<int64_t> expertOf;
  std::istringstream trace(g.files[0].second);
  std::string line;
  std::getline(trace, line);
  while (std::getline(trace, line)) expertOf.push_back(std::stoll(line.substr(line.find(',') + 1)));
  REQUIRE(expertOf.size() == 2);
  const Matrix &x = in.at("x1"), &y = r.outputs.at("y0");
  REQUIRE((y.rows == 8 && y.cols == 64));
  std::vector<uint32_t> want;
  for (int64_t e = 0; e < 4; ++e) {
    int64_t rows = 0;
    for (size_t t = 0; t < expertOf.size(); ++t)
      if (expertOf[t] == e) want.insert(want.end(), x.data.begin() + int64_t(t) * 64, x.data.begin() + int64_t(t + 1) * 64), ++rows;
    for (; rows % 4 != 0; ++rows) want.insert(want.end(), 64, 0u);
  }
  CHECK(want == y.data);
}

// Seed 113 with the combine step, read by hand: 4 token rows x1 [1, 16], each to 2 of 3
// experts by its trace (random_113_route0.csv; token 1's are listed as (1, 0)), padded to tiles of 2 rows and merged in expert
// order; each merged tile gets its expert's bias tile b0[2e .. 2e+1] added, and the combine
// cluster puts the rows back by token, a token's experts in ascending order. So row 2t + j of
// y0 is x1[t] + b0[2e + i % 2], e the j-th smallest expert of token t and t the i-th token
// of e. Run by the model on arch/moe.yaml (three route-mode memory units and more); the
// expected values by a plain loop in fp32.
TEST_CASE("random graphs: a combine step puts each expert's rows back in token order", "[random]") {
  RandomGraphLimits lim;
  lim.partition = lim.merge = lim.route = lim.combine = true;
  const RandomGraph g = buildRandomGraph(113, lim);
  REQUIRE(g.files.size() == 1);
  for (const char* l : {"symbols: {N: 4, M: 1}", "b0: {shape: [6, 16], role: input}", "y0: {shape: [N*2, 16], role: output}",
                        "{name: part_p6, op: Partition, in: [s1, sel4], n: 3, b: 0, out: [p6, p7, p8]}",
                        "{name: reshape_g9, op: Reshape, chunk: 2, b: 0, pad: true, in: p6, out: [g9, g11]}",
                        "{name: load_b0, op: RandomOffChipLoad, tensor: b0, tile: [2, 16], in: a24, out: s25}",
                        "{name: reassemble_s30, op: Reassemble, in: [s35, s37, s39, sel5], n: 3, b: 0, out: s30}",
                        "{name: store_y0, op: LinearOffChipStore, in: s30, tensor: y0, tile: [1, 16], iter: [N, 2]"}) {
    INFO(l);
    REQUIRE(g.yaml.find(l) != std::string::npos);
  }
  CHECK(buildRandomGraph(113, RandomGraphLimits{}).yaml.find("op: Reassemble") == std::string::npos);
  const DefaultRun d = runOnArch(g, 113, readText(std::string(STEPGEN_ROOT) + "/arch/moe.yaml"));
  const auto& in = d.in;
  const ModelResult& r = d.r;
  REQUIRE_FALSE(r.timing.deadlock);
  // The trace: "token,expert_0,expert_1" then one line per token.
  std::vector<std::vector<int64_t>> experts;
  std::istringstream trace(g.files[0].second);
  std::string line;
  std::getline(trace, line);
  while (std::getline(trace, line)) {
    int64_t t, e0, e1;
    REQUIRE(std::sscanf(line.c_str(), "%ld,%ld,%ld", &t, &e0, &e1) == 3);
    experts.push_back({e0, e1});
  }
  REQUIRE(experts.size() == 4);
  const Matrix &x = in.at("x1"), &b = in.at("b0"), &y = r.outputs.at("y0");
  REQUIRE((y.rows == 8 && y.cols == 16));
  std::vector<int64_t> seen(3, 0);  // tokens each expert has had so far
  std::vector<float> want(8 * 16);
  for (int64_t t = 0; t < 4; ++t) {
    std::vector<int64_t> es = experts[size_t(t)];
    std::sort(es.begin(), es.end());
    for (int64_t e : experts[size_t(t)]) ++seen[size_t(e)];
    for (size_t j = 0; j < 2; ++j) {
      const int64_t e = es[j], i = seen[size_t(e)] - 1;
      for (int64_t c = 0; c < 16; ++c) want[size_t((2 * t + int64_t(j)) * 16 + c)] = word(x, t, c) + word(b, 2 * e + i % 2, c);
    }
  }
  for (int64_t row = 0; row < 8; ++row)
    for (int64_t c = 0; c < 16; ++c) {
      INFO("row " << row << " col " << c);
      CHECK(word(y, row, c) == want[size_t(row * 16 + c)]);
    }
}

// Seed 81 with the scan step, read by hand: x0 [N*8, M*64] (N = M = 2) is loaded as [8, 64]
// tiles in (n, m) order and y1 is Scan(max, b 1) of it: tile (n, m) of y1 is the elementwise
// max of x0's tiles (n, 0) .. (n, m). y0 is x1 as loaded. The expected values by a plain loop.
TEST_CASE("random graphs: a scan step keeps a running max over each group", "[random]") {
  const DefaultRun d = runDynamic(81, {"{name: scan_s2, op: Scan, fn: max, b: 1, in: s0, out: s2}",
                                      "{name: store_y1, op: LinearOffChipStore, in: s2, tensor: y1, tile: [8, 64], iter: [N, M]"});
  CHECK(buildRandomGraph(81, RandomGraphLimits{}).yaml.find("op: Scan") == std::string::npos);
  const Matrix &x0 = d.in.at("x0"), &x1 = d.in.at("x1"), &y0 = d.r.outputs.at("y0"), &y1 = d.r.outputs.at("y1");
  REQUIRE((x0.rows == 16 && x0.cols == 128));
  CHECK(y0.data == x1.data);
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < 128; ++c) {
      float want = word(x0, r, c % 64);  // the group's first tile, then the max with each next one
      for (int64_t m = 1; m <= c / 64; ++m) want = std::max(want, word(x0, r, m * 64 + c % 64));
      REQUIRE(std::isfinite(want));
      CHECK(word(y1, r, c) == want);
    }
}

// Seed 119 with the parallelize step, read by hand: x0 [N*8, 16] (N = 4) is loaded as [8, 16]
// tiles and dealt by a Parallelize: y1 gets tiles 0 and 2, y2 tiles 1 and 3 (rows 8t .. 8t+7
// of x0 each). The expected rows by a plain loop.
TEST_CASE("random graphs: a parallelize step deals even and odd tiles", "[random]") {
  const DefaultRun d = runDynamic(119, {"{name: par_q2, op: Parallelize, in: s0, out: [q2, q3]}",
                                      "{name: store_y1, op: LinearOffChipStore, in: q2, tensor: y1, tile: [8, 16], iter: [2],",
                                      "{name: store_y2, op: LinearOffChipStore, in: q3, tensor: y2, tile: [8, 16], iter: [2],"});
  CHECK(buildRandomGraph(119, RandomGraphLimits{}).yaml.find("op: Parallelize") == std::string::npos);
  const Matrix &x = d.in.at("x0"), &y1 = d.r.outputs.at("y1"), &y2 = d.r.outputs.at("y2");
  REQUIRE((x.rows == 32 && x.cols == 16));
  std::vector<uint32_t> even, odd;
  for (int64_t t = 0; t < 4; ++t) {
    std::vector<uint32_t>& to = t % 2 == 0 ? even : odd;
    to.insert(to.end(), x.data.begin() + t * 128, x.data.begin() + (t + 1) * 128);
  }
  CHECK(y1.data == even);
  CHECK(y2.data == odd);
}

// Seed 129 with the dynamic functions, read by hand: y0 = scale_rows(x0, x1), x0 [N*4, M*32]
// and x1 [N*4, M*16] (N = 3, M = 2) loaded as [4, 32] and [4, 16] tiles in step: row r of
// tile (n, m) of y0 is x0's row times word 0 of x1's row r in tile (n, m), an fp32 multiply.
TEST_CASE("random graphs: a scale_rows step multiplies each row by its scalar", "[random]") {
  const DefaultRun d = runDynamic(129, {"{name: zip_z2, op: Zip, in: [s0, s1], out: z2}",
                                      "{name: scale_rows_s3, op: Map, fn: scale_rows, in: z2, out: s3}",
                                      "{name: store_y0, op: LinearOffChipStore, in: s3, tensor: y0, tile: [4, 32], iter: [N, M]"});
  const Matrix &x0 = d.in.at("x0"), &x1 = d.in.at("x1"), &y = d.r.outputs.at("y0");
  REQUIRE((x0.rows == 12 && x0.cols == 64 && x1.cols == 32));
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t c = 0; c < 64; ++c) CHECK(word(y, r, c) == word(x0, r, c) * word(x1, r, c / 32 * 16));
}

// Seed 59 with the dynamic functions, read by hand: y0 = matmul_t(x0, w0), x0 [N*4, M*64]
// (N = M = 4) as [4, 64] tiles, w0 [64, 64] stored [out, in], the same tile for each: y0[r][j]
// = sum over k of bf16(x0[r][k]) * bf16(w0[j][k]) (bf16 by truncation, exact products), added
// in k order into fp32 from +0, by a plain loop.
TEST_CASE("random graphs: a matmul_t step reads its weight transposed", "[random]") {
  const DefaultRun d = runDynamic(59, {"w0: {shape: [64, 64], role: input}",
                                      "{name: matmul_s3, op: Map, fn: matmul_t, in: z2, out: s3}",
                                      "{name: store_y0, op: LinearOffChipStore, in: s3, tensor: y0, tile: [4, 64], iter: [N, M]"});
  const Matrix &x = d.in.at("x0"), &w = d.in.at("w0"), &y = d.r.outputs.at("y0");
  REQUIRE((x.rows == 16 && x.cols == 256 && w.rows == 64));
  auto bf16 = [](float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    b &= 0xFFFF0000u;
    std::memcpy(&v, &b, 4);
    return v;
  };
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t m = 0; m < 4; ++m)
      for (int64_t j = 0; j < 64; ++j) {
        float acc = 0;
        for (int64_t k = 0; k < 64; ++k) acc += bf16(word(x, r, m * 64 + k)) * bf16(word(w, j, k));
        CHECK(word(y, r, m * 64 + j) == acc);
      }
}

// Seed 109 with the dynamic functions, read by hand: y1 = Expand(b 1) of x2 [N*2, 64] loaded
// as an [N, 1] stream of [2, 64] tiles to the stops of x0's [N, M] stream (N = M = 3): tile
// (n, m) of y1 is x2's tile n for every m. y0 is x1 as loaded. The expected rows by a plain loop.
TEST_CASE("random graphs: an expand step repeats each tile over its group", "[random]") {
  const DefaultRun d = runDynamic(109, {"{name: expand_s3, op: Expand, b: 1, in: [s2, s0], out: s3}",
                                        "{name: store_y1, op: LinearOffChipStore, in: s3, tensor: y1, tile: [2, 64], iter: [N, M]"});
  CHECK(buildRandomGraph(109, RandomGraphLimits{}).yaml.find("op: Expand") == std::string::npos);
  const Matrix &x1 = d.in.at("x1"), &x2 = d.in.at("x2"), &y0 = d.r.outputs.at("y0"), &y1 = d.r.outputs.at("y1");
  REQUIRE((x2.rows == 6 && x2.cols == 64 && y1.cols == 192));
  CHECK(y0.data == x1.data);
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t c = 0; c < 192; ++c) CHECK(y1.data[size_t(r * 192 + c)] == x2.data[size_t(r * 64 + c % 64)]);
}

// Seeds 23, 81 and 539 with the attention steps, read by hand: seed 23's y1 = rowmax(x1),
// x1 [N*2, 32] as [2, 32] tiles (N = 3), each row's max in every word, exact; seed 81's
// y1 = recip(x0) and seed 539's y2 = exp(x2), x0 [16, 128] and x2 [4, 64], word by word
// against libm within the units' documented relative errors (5e-6 and 3.5e-4,
// tests/unit/test_fp.cpp); seed 539's y1 = Accum(rescale_add, b 1) of x0 [8, M*16] zipped
// with itself (M = 2): acc = acc * x + x over the group's tiles from +0, two fp32 roundings,
// exact.
TEST_CASE("random graphs: the attention steps against plain loops", "[random]") {
  {
    const DefaultRun d = runDynamic(23, {"{name: rowmax_s3, op: Map, fn: rowmax, in: s1, out: s3}",
                                           "{name: store_y1, op: LinearOffChipStore, in: s3, tensor: y1, tile: [2, 32], iter: [N]"}, true);
    const Matrix &x1 = d.in.at("x1"), &y1 = d.r.outputs.at("y1");
    REQUIRE((x1.rows == 6 && x1.cols == 32));
    for (int64_t r = 0; r < 6; ++r) {
      float want = word(x1, r, 0);
      for (int64_t c = 1; c < 32; ++c) want = std::max(want, word(x1, r, c));
      for (int64_t c = 0; c < 32; ++c) CHECK(word(y1, r, c) == want);
    }
  }
  {
    const DefaultRun d = runDynamic(81, {"{name: recip_s2, op: Map, fn: recip, in: s0, out: s2}",
                                           "{name: store_y1, op: LinearOffChipStore, in: s2, tensor: y1, tile: [8, 64], iter: [N, M]"}, true);
    const Matrix &x0 = d.in.at("x0"), &y1 = d.r.outputs.at("y1");
    REQUIRE((x0.rows == 16 && x0.cols == 128));
    for (int64_t r = 0; r < 16; ++r)
      for (int64_t c = 0; c < 128; ++c) CHECK(std::fabs(double(word(y1, r, c)) * double(word(x0, r, c)) - 1.0) < 5e-6);
  }
  const DefaultRun d = runDynamic(539, {"{name: zip_z5, op: Zip, in: [b3, b4], out: z5}",
                                          "{name: accum_s6, op: Accum, fn: rescale_add, b: 1, in: z5, out: s6}",
                                          "{name: exp_s7, op: Map, fn: exp, in: s2, out: s7}",
                                          "{name: store_y1, op: LinearOffChipStore, in: s6, tensor: y1, tile: [8, 16], iter: [N]",
                                          "{name: store_y2, op: LinearOffChipStore, in: s7, tensor: y2, tile: [4, 64], iter: [N]"}, true);
  const Matrix &x0 = d.in.at("x0"), &x2 = d.in.at("x2"), &y1 = d.r.outputs.at("y1"), &y2 = d.r.outputs.at("y2");
  REQUIRE((x0.rows == 8 && x0.cols == 32 && x2.rows == 4 && x2.cols == 64));
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t c = 0; c < 16; ++c) {
      float acc = 0;
      for (int64_t m = 0; m < 2; ++m) {
        const float x = word(x0, r, m * 16 + c), p = acc * x;
        acc = p + x;
      }
      CHECK(word(y1, r, c) == acc);
    }
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 64; ++c) CHECK(std::fabs(double(word(y2, r, c)) / std::exp(double(word(x2, r, c))) - 1.0) < 3.5e-4);
}

// Seed 444 at link FIFO depth 1 (tests/data/graphs/random_s444_expand.yaml): expand_s6 repeats
// each [8, 64] data tile (32 beats) over 4 one-beat ref tiles, into a one-beat FIFO. By hand,
// from sg_fifo (a push into a one-beat FIFO waits a cycle after the pop): a copy takes 64
// cycles (a beat every other cycle, then the next copy's first beat), 4 of them 256; the next
// data tile's first beat, waiting in its FIFO, is taken 2 cycles before the last copy ends,
// and its other 31 beats come every other cycle, 62 more, before the next group's first
// copy: 256 - 2 + 62 = 316 cycles per group. So N = 4 takes one period more than N = 3.
// (Verilator on that fabric: 1,071 and 1,387 cycles.) The model took the 31 beats one per
// cycle: 286 per group.
TEST_CASE("random graphs: a data tile that waited in a one-beat FIFO comes a beat every other cycle", "[random]") {
  auto cycles = [](int n) {
    std::string g = readText(std::string(STEPGEN_ROOT) + "/tests/data/graphs/random_s444_expand.yaml");
    g = std::regex_replace(g, std::regex("symbols: \\{N: 4,"), fmt::format("symbols: {{N: {},", n));
    const auto dir = std::filesystem::temp_directory_path() / "sg_random_444";
    writeFile(dir / "graph.yaml", g);
    const CompileResult c =
        compileProgram(std::string(STEPGEN_ROOT) + "/tests/data/arch_random_a4_fifo1.yaml", (dir / "graph.yaml").string());
    const ModelResult r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, loadInputs(c.graph, "", 444));
    std::filesystem::remove_all(dir);
    REQUIRE_FALSE(r.timing.deadlock);
    return r.timing.cycles;
  };
  const int64_t c3 = cycles(3), c4 = cycles(4);
  CHECK(std::abs(c4 - c3 - 316) <= 1);
  CHECK(std::abs(c4 - 1387) <= 1387 / 100);
}

// A Parallelize whose two outputs meet again at a Zip (tests/data/graphs/parallelize_reconverge.yaml,
// which says why): by counting the slots output 0's tile can wait in (the Zip's FIFO of d
// beats, output 0's output register, its own input FIFO less the slot output 1's first beat
// needs), a tile of B beats passes when B <= 2d: at d = 1, B = 2 finishes and 3 deadlocks; at
// d = 2, 4 finishes and 5 deadlocks. The output is the product of tiles 2i+1 and 2i by a
// plain loop; the cycles are Verilator's on that fabric (150, 143, 167; the model is early at
// d = 2, B = 4 by a cycle a tile pair), and the random seed-4 graph it was reduced from (RTL
// 193 cycles) runs too. Without buffering: planBuffers gives the deadlocking cases a buffer
// (test_buffering.cpp), here the FIFOs' own limit is the subject.
TEST_CASE("random graphs: a Parallelize whose outputs meet again holds a beat in its output register", "[random]") {
  const std::string root = std::string(STEPGEN_ROOT) + "/tests/data/";
  const std::string arch1 = readText(root + "arch_random_a4_3mu_fifo1.yaml");
  auto run = [&](int beats, int depth) {
    RandomGraph g;
    g.yaml = std::regex_replace(readText(root + "graphs/parallelize_reconverge.yaml"), std::regex("32\\]"),
                                fmt::format("{}]", 16 * beats));
    return runOnArch(g, 1, std::regex_replace(arch1, std::regex("fifo_depth: 1"), fmt::format("fifo_depth: {}", depth)), false);
  };
  auto finishes = [&](int beats, int depth, int64_t rtlCycles) {
    INFO("B = " << beats << ", d = " << depth);
    const DefaultRun d = run(beats, depth);
    REQUIRE_FALSE(d.r.timing.deadlock);
    const Matrix& x = d.in.at("x");
    const Matrix& y = d.r.outputs.at("y");
    for (int64_t r = 0; r < 4; ++r)
      for (int64_t c = 0; c < 16 * beats; ++c) CHECK(word(y, r, c) == word(x, 2 * r + 1, c) * word(x, 2 * r, c));
    CHECK(std::abs(d.r.timing.cycles - rtlCycles) <= rtlCycles / 20);
  };
  auto deadlocks = [&](int beats, int depth) {
    INFO("B = " << beats << ", d = " << depth);
    const DefaultRun d = run(beats, depth);
    REQUIRE(d.r.timing.deadlock);
    const std::string stuck = fmt::format("{}", fmt::join(d.r.timing.stuck, "\n"));
    CHECK(stuck.find("q0 (par -> mul) at tile 0") != std::string::npos);
    CHECK(stuck.find("q1 (par (output 1) -> mul) at tile 0 of 5: no data") != std::string::npos);
  };
  finishes(2, 1, 150);
  deadlocks(3, 1);
  finishes(3, 2, 143);
  finishes(4, 2, 167);
  deadlocks(5, 2);

  const CompileResult c = compileProgram(root + "arch_random_a4_3mu_fifo1.yaml", root + "graphs/random_s4_parallelize.yaml");
  const ModelResult r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, loadInputs(c.graph, "", 4));
  REQUIRE_FALSE(r.timing.deadlock);
  CHECK(std::abs(r.timing.cycles - 193) <= 193 / 50);
}

// Seed 674 (tests/data/graphs/random_s674_expand.yaml, which says why): a one-beat Expand copy
// leaves with its ref tile's last beat, 8 beats after the ref tile starts. Verilator on that
// fabric: 156 cycles at link FIFO depth 1, 141 at depth 2; the model was 140 and 132.
TEST_CASE("random graphs: a one-beat Expand copy leaves with its ref tile's last beat", "[random]") {
  const std::string root = std::string(STEPGEN_ROOT) + "/tests/data/";
  for (auto [arch, rtl] : {std::pair<const char*, int64_t>{"arch_random_a4_3mu_fifo1.yaml", 156}, {"arch_random_a4_3mu.yaml", 141}}) {
    INFO(arch);
    const CompileResult c = compileProgram(root + arch, root + "graphs/random_s674_expand.yaml");
    const ModelResult r = runModel(c.graph, c.shapes, c.mapping, c.arch, c.programLayout, c.image, loadInputs(c.graph, "", 674));
    REQUIRE_FALSE(r.timing.deadlock);
    CHECK(std::abs(r.timing.cycles - rtl) <= rtl / 50);
  }
}
