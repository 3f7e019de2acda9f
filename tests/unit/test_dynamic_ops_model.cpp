// Golden streams of the operators that only exist inside the functional model's graph
// runner (SelectGen from a trace file, AddrGen, RandomOffChipLoad/Store, outermost Promote),
// worked out by hand from docs/step_semantics.md#operators and docs/graph_format.md.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "arch/arch_model.hpp"
#include "ir/graph.hpp"
#include "model/functional.hpp"
#include "passes/shape_check.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

namespace {

struct DynRun {
  StepGraph g;
  FunctionalResult r;
  const TokenStream& s(const std::string& name) const { return r.streams.at(g.findStream(name)->v); }
};

// Writes the trace and the graph into a fresh folder and runs the model; w[r][c] = 100*r + c.
DynRun run(const std::string& csv, const std::string& graph) {
  fs::path dir = fs::temp_directory_path() / fmt::format("stepgen_dyn_golden_{}", std::hash<std::string>{}(graph) % 100000);
  fs::create_directories(dir);
  std::ofstream(dir / "r.csv") << csv;
  std::ofstream(dir / "g.yaml") << graph;
  DynRun x;
  x.g = loadGraph((dir / "g.yaml").string());
  ShapeResult s = checkShapes(x.g);
  Matrix w{12, 16, {}};
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 16; ++c) w.data.push_back(uint32_t(100 * r + c));
  ArchModel a;
  x.r = runFunctional(x.g, s, a, {{"w", w}});
  return x;
}

// "D" = Done, "S<n>" = Stop n, "<word0>:<stop>" for Data (the first word of the tile, or the
// selected output for a selector).
std::string show(const TokenStream& t) {
  std::string s;
  for (const Token& k : t) {
    if (!s.empty()) s += " ";
    if (k.kind == Token::Kind::Done) s += "D";
    else if (k.kind == Token::Kind::Stop) s += fmt::format("S{}", k.stop);
    else s += fmt::format("{}:{}", k.sel.empty() ? (*k.data)[0] : uint32_t(k.sel[0]), k.stop);
  }
  return s;
}

const char* kTrace = "token,expert_0\n0,2\n1,0\n2,2\n3,1\n";

// The graph text: B = tokens, the input w (12 x 16) and the output y (yRows x 16), then ops
// (the lines of the op list).
std::string graph(int tokens, int yRows, const char* ops) {
  return fmt::format("stepgraph: g\nsymbols: {{B: {}}}\ntensors:\n  w: {{shape: [12, 16], role: input}}\n"
                     "  y: {{shape: [{}, 16], role: output}}\nops:\n",
                     tokens, yRows) +
         ops;
}

}  // namespace

TEST_CASE("golden: SelectGen -> AddrGen(2) -> RandomOffChipLoad, stop levels of a rank-1 selector", "[model][golden]") {
  DynRun x = run(kTrace, graph(4, 16, R"(  - {name: route, op: SelectGen, trace: r.csv, n: 3, k: 1, iter: [2, 2], out: sel}
  - {name: addr, op: AddrGen, tiles: 2, in: sel, out: a}
  - {name: lw, op: RandomOffChipLoad, tensor: w, tile: [2, 16], in: a, out: wt}
  - {name: st, op: LinearOffChipStore, in: wt, tensor: y, iter: [2, 2, 2], strides: [[4, 0], [2, 0], [1, 0]]}
)"));
  // Tokens 0..3 route to experts 2, 0, 2, 1; the iter [2, 2] walk closes a group after
  // tokens 1 and 3 (stop 1). AddrGen: expert e -> tiles 2e, 2e+1, the last with stop s + 1.
  CHECK(show(x.s("sel")) == "2:0 0:1 2:0 1:1 D");
  CHECK(show(x.s("a")) == "4:0 5:1 0:0 1:2 4:0 5:1 2:0 3:2 D");
  // Tile a of w (2 x 16 rows 2a, 2a+1): first word 100 * 2a.
  CHECK(show(x.s("wt")) == "800:0 1000:1 0:0 200:2 800:0 1000:1 400:0 600:2 D");
  const Matrix& y = x.r.outputs.at("y");
  CHECK(y.data[size_t(7 * 16 + 5)] == 100 * 3 + 5);   // store tile 3 = w tile 1, row 1
  CHECK(y.data[size_t(15 * 16 + 15)] == 100 * 7 + 15);  // store tile 7 = w tile 3, row 1
}

TEST_CASE("golden: RandomOffChipStore scatters tiles by address", "[model][golden]") {
  DynRun x = run(kTrace, graph(4, 6, R"(  - {name: route, op: SelectGen, trace: r.csv, n: 3, k: 1, iter: [B], out: sel}
  - {name: bs, op: Broadcast, in: sel, out: [s1, s2]}
  - {name: lw, op: RandomOffChipLoad, tensor: w, tile: [2, 16], in: s1, out: wt}
  - {name: sw, op: RandomOffChipStore, tensor: y, in: [s2, wt]}
)"));
  // Token t loads w tile e_t and writes it back to y tile e_t: y tiles 0, 1, 2 = w tiles.
  const Matrix& y = x.r.outputs.at("y");
  for (int r = 0; r < 6; ++r) CHECK(y.data[size_t(r * 16 + 3)] == uint32_t(100 * r + 3));
}

TEST_CASE("golden: Promote over the outermost dim makes one group, none for an empty stream", "[model][golden]") {
  DynRun x = run("token,expert_0\n0,0\n1,2\n2,0\n", graph(3, 4, R"(  - {name: route, op: SelectGen, trace: r.csv, n: 3, k: 1, iter: [B], out: sel}
  - {name: lx, op: LinearOffChipLoad, tensor: w, tile: [1, 16], iter: [B], strides: [[1, 0]], out: xr}
  - {name: p, op: Partition, in: [xr, sel], n: 3, b: 0, out: [e0, e1, e2]}
  - {name: pr0, op: Promote, b: 1, in: e0, out: g0}
  - {name: pr1, op: Promote, b: 1, in: e1, out: g1}
  - {name: pr2, op: Promote, b: 1, in: e2, out: g2}
  - {name: rt0, op: Accum, fn: retile, b: 1, in: g0, out: t0}
  - {name: rt1, op: Accum, fn: retile, b: 1, in: g1, out: t1}
  - {name: rt2, op: Accum, fn: retile, b: 1, in: g2, out: t2}
  - {name: m, op: EagerMerge, b: 0, in: [t0, t1, t2], out: xm}
  - {name: st, op: LinearOffChipStore, in: xm, tensor: y, tile: [1, 16], iter: [4], strides: [[1, 0]]}
)"));
  CHECK(show(x.s("g0")) == "0:0 200:1 D");  // rows 0 and 2 form one group
  CHECK(show(x.s("g1")) == "D");            // expert 1 got no token: no group at all
  CHECK(show(x.s("g2")) == "100:1 D");
  CHECK(show(x.s("xm")) == "0:0 100:0 D");   // one tile per non-empty expert, ascending
  const Matrix& y = x.r.outputs.at("y");  // stored word by word: rows 0, 2, 1, then zeros
  CHECK(y.data[0] == 0);
  CHECK(y.data[16] == 200);
  CHECK(y.data[32] == 100);
  CHECK(y.data[48] == 0);
  const TokenStream& xm = x.s("xm");
  CHECK(xm[0].rows == 2);
  CHECK(xm[1].rows == 1);
}

// An index load (RandomOffChipLoad with `index`, no `count`): meta row r names tile
// word[index] of w; the stream keeps the meta rows' shape and stops (no dim is added).
TEST_CASE("golden: an index load reads the tile each meta row names, stops unchanged", "[model][golden][quick]") {
  const std::string text =
      "stepgraph: g\ntensors:\n  w: {shape: [12, 16], role: input}\n  m: {shape: [4, 16], role: input}\n"
      "  y: {shape: [4, 16], role: output}\nops:\n"
      "  - {name: lm, op: LinearOffChipLoad, tensor: m, tile: [1, 16], iter: [2, 2], strides: [[2, 0], [1, 0]], out: rows}\n"
      "  - {name: lw, op: RandomOffChipLoad, in: rows, tensor: w, tile: [1, 16], index: 3, out: wt}\n"
      "  - {name: st, op: LinearOffChipStore, in: wt, tensor: y, iter: [2, 2], strides: [[2, 0], [1, 0]]}\n";
  fs::path dir = fs::temp_directory_path() / "stepgen_index_load_golden";
  fs::create_directories(dir);
  std::ofstream(dir / "g.yaml") << text;
  DynRun x;
  x.g = loadGraph((dir / "g.yaml").string());
  fs::remove_all(dir);
  const ShapeResult s = checkShapes(x.g);
  CHECK(s.types.at(size_t(x.g.findStream("wt")->v)).shape.size() == 2);
  Matrix w{12, 16, {}}, m{4, 16, std::vector<uint32_t>(64, 0)};
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 16; ++c) w.data.push_back(uint32_t(100 * r + c));
  const uint32_t index[4] = {7, 0, 11, 7};
  for (int r = 0; r < 4; ++r) m.data[size_t(r * 16 + 3)] = index[r];
  ArchModel a;
  x.r = runFunctional(x.g, s, a, {{"w", w}, {"m", m}});
  // A [2, 2] walk: rows 1 and 3 end the inner dim (stop 1; the outer dim's end is Done).
  CHECK(show(x.s("wt")) == "700:0 0:1 1100:0 700:1 D");
  const Matrix& y = x.r.outputs.at("y");
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 16; ++c) CHECK(y.data[size_t(r * 16 + c)] == 100 * index[r] + uint32_t(c));
}
