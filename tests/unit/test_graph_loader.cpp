// loadGraph and buildSwigluGraph: the example graph and the builder's output load with the
// expected ops and streams; every bad input under tests/data/bad/graph_*.yaml gives the
// expected diagnostic id, line, column and names the offending thing.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "builders/swiglu.hpp"
#include "ir/graph.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


Diagnostic graphError(const std::string& name, size_t* count = nullptr) {
  try {
    loadGraph(kRoot + "/tests/data/bad/" + name);
  } catch (const DiagError& e) {
    REQUIRE(!e.diags.empty());
    if (count) *count = e.diags.size();
    return e.diags.front();
  }
  FAIL("no error for " << name);
  return {};
}

/// Checks the first diagnostic and that the file produced exactly one.
Diagnostic expectDiag(const std::string& file, const char* id, int line, int col, const char* mentions) {
  INFO(file);
  size_t n = 0;
  Diagnostic d = graphError(file, &n);
  INFO(formatDiagnostic(d));
  CHECK(n == 1);
  CHECK(d.id == id);
  CHECK(d.loc.line == line);
  CHECK(d.loc.col == col);
  CHECK(d.message.find(mentions) != std::string::npos);
  return d;
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Writes text to a temporary file and loads it as a graph.
StepGraph loadText(const std::string& text, const std::string& name) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("stepgen_test_" + std::to_string(::getpid()) + "_" + name)).string();
  {
    std::ofstream out(path);
    out << text;
  }
  StepGraph g = loadGraph(path);
  std::remove(path.c_str());
  return g;
}

}  // namespace

TEST_CASE("op kind names round-trip", "[graph]") {
  for (int i = 0; i <= int(OpKind::Parallelize); ++i) {
    auto k = OpKind(i);
    auto back = opKindFromName(opKindName(k));
    REQUIRE(back);
    CHECK(*back == k);
  }
  CHECK(!opKindFromName("map"));
  CHECK(std::string(opKindName(OpKind::LinearOffChipLoad)) == "LinearOffChipLoad");
}

TEST_CASE("tiny graph loads", "[graph]") {
  StepGraph g = loadGraph(kRoot + "/tests/data/graph_tiny.yaml");
  CHECK(g.name == "tiny");
  CHECK(g.symbols.at("N") == 4);
  REQUIRE(g.ops.size() == 3);
  REQUIRE(g.streams.size() == 2);
  REQUIRE(g.tensors.size() == 2);
  CHECK(g.tensors[0].baseAddress == 0);
  CHECK(g.tensors[1].baseAddress == 4096);
  CHECK(!g.tensors[0].isOutput);
  CHECK(g.tensors[1].isOutput);
  auto s = g.findStream("s");
  REQUIRE(s);
  CHECK(g.stream(*s).producer.v == 0);
  REQUIRE(g.stream(*s).consumers.size() == 1);
  CHECK(g.stream(*s).consumers[0].v == 1);
  CHECK(g.stream(*s).loc.line == 7);
  CHECK(!g.findStream("nope"));
  CHECK(g.findTensor("b") == 1);
  CHECK(!g.findTensor("c"));
  const Op& ld = g.ops[0];
  CHECK(ld.kind == OpKind::LinearOffChipLoad);
  CHECK(ld.inputs.empty());
  REQUIRE(ld.outputs.size() == 1);
  CHECK(ld.attrs.at("tensor").scalar == "a");
  const Attr& strides = ld.attrs.at("strides");
  REQUIRE(strides.isList);
  REQUIRE(strides.list.size() == 1);
  REQUIRE(strides.list[0].list.size() == 2);
  CHECK(strides.list[0].list[1].scalar == "0");
  CHECK(ld.attrs.count("out") == 0);
  CHECK(g.ops[1].attrs.at("fn").scalar == "silu");
  CHECK(g.ops[1].attrs.at("fn").loc.line == 8);
  CHECK(g.ops[1].attrs.at("fn").loc.col == 29);
}

TEST_CASE("example SwiGLU graph loads", "[graph][swiglu]") {
  StepGraph g = loadGraph(kRoot + "/examples/swiglu/graph.yaml");
  CHECK(g.name == "swiglu");
  CHECK(g.ops.size() == 16);
  CHECK(g.streams.size() == 16);
  REQUIRE(g.tensors.size() == 5);
  CHECK(g.symbols.at("B") == 16);
  CHECK(g.symbols.at("D") == 64);
  CHECK(g.symbols.at("F") == 128);
  CHECK(g.symbols.at("tb") == 8);
  CHECK(g.symbols.at("tf") == 32);
  const char* names[] = {"x", "wg", "wu", "wd", "out"};
  const int64_t bases[] = {0, 4096, 4096 + 32768, 4096 + 2 * 32768, 4096 + 3 * 32768};
  for (int i = 0; i < 5; ++i) {
    CHECK(g.tensors[i].name == names[i]);
    CHECK(g.tensors[i].baseAddress == bases[i]);
    CHECK(g.tensors[i].isOutput == (i == 4));
  }
  int declared = 0;
  for (const auto& s : g.streams) {
    declared += s.declared.has_value();
    CHECK(s.producer.valid());
    CHECK(s.consumers.size() == 1);
  }
  CHECK(declared == 12);  // every non-tuple stream
  auto o = g.findStream("o");
  REQUIRE(o);
  REQUIRE(g.stream(*o).declared);
  CHECK(g.stream(*o).declared->rank() == 0);
  CHECK(g.stream(*o).declared->shape[0].evaluate(g.symbols) == 2);
  auto bx = g.findStream("x_t");
  REQUIRE(bx);
  CHECK(g.op(g.stream(*bx).consumers[0]).kind == OpKind::Broadcast);
  CHECK(g.op(g.stream(*bx).consumers[0]).outputs.size() == 2);
}

TEST_CASE("example graph is exactly buildSwigluGraph's output", "[graph][swiglu]") {
  SwigluParams p{16, 64, 128, 8, 32};
  CHECK(readText(kRoot + "/examples/swiglu/graph.yaml") == buildSwigluGraph(p));
}

TEST_CASE("buildSwigluGraph output loads back", "[graph][swiglu]") {
  SwigluParams p;  // the paper's validation layer: B=64, D=256, F=512, 16 x 256 x 16
  std::string text = buildSwigluGraph(p);
  CHECK(text == buildSwigluGraph(p));  // deterministic
  StepGraph g = loadText(text, "swiglu.yaml");
  CHECK(g.ops.size() == 16);
  CHECK(g.streams.size() == 16);
  CHECK(g.symbols.at("F") == 512);
  CHECK(g.symbols.at("tf") == 16);
  auto xt = g.findStream("x_t");
  REQUIRE(xt);
  CHECK(g.stream(*xt).declared->shape[1].evaluate(g.symbols) == 32);

  p.tileB = 64;
  p.tileF = 256;
  StepGraph g2 = loadText(buildSwigluGraph(p), "swiglu2.yaml");
  CHECK(g2.symbols.at("tb") == 64);
}

TEST_CASE("buildSwigluGraph rejects tiles that do not divide", "[graph][swiglu]") {
  auto expectG120 = [](SwigluParams p, const char* mentions) {
    try {
      buildSwigluGraph(p);
      FAIL("no error");
    } catch (const DiagError& e) {
      CHECK(e.diags.at(0).id == "G-120");
      CHECK(e.diags.at(0).message.find(mentions) != std::string::npos);
    }
  };
  expectG120(SwigluParams{64, 256, 512, 24, 16}, "tile_b");
  expectG120(SwigluParams{64, 256, 512, 16, 48}, "tile_f");
  expectG120(SwigluParams{0, 256, 512, 16, 16}, "batch");
}

TEST_CASE("bad graph files give located diagnostics", "[graph][diag]") {
  SECTION("unknown operator") {
    Diagnostic d = expectDiag("graph_unknown_op.yaml", "G-101", 8, 20, "'Mapp'");
    CHECK(d.message.find("did you mean Map?") != std::string::npos);
    CHECK(d.message.find("LinearOffChipLoad") != std::string::npos);
  }
  SECTION("formerly unsupported operator now loads") {
    // Since issue 3 Scan (and the other dynamic-path operators) load; G-110 is unused.
    CHECK_NOTHROW(loadGraph(kRoot + "/tests/data/bad/graph_unsupported_op.yaml"));
  }
  SECTION("dangling input") {
    Diagnostic d = expectDiag("graph_dangling.yaml", "G-104", 7, 39, "ops[0].in: stream 'q'");
    REQUIRE(!d.notes.empty());
    CHECK(d.notes[0].loc.line == 7);  // the consumer
  }
  SECTION("dangling output") {
    Diagnostic d = expectDiag("graph_dangling_out.yaml", "G-105", 8, 48, "'s2'");
    REQUIRE(!d.notes.empty());
    CHECK(d.notes[0].message.find("bc") != std::string::npos);
  }
  SECTION("doubly consumed stream") {
    Diagnostic d = expectDiag("graph_double_consumer.yaml", "G-103", 9, 40, "ops[2].in: stream 's' is consumed by both sl and sl2; use Broadcast");
    REQUIRE(d.notes.size() == 1);
    CHECK(d.notes[0].loc.line == 8);
  }
  SECTION("doubly produced stream") { expectDiag("graph_produced_twice.yaml", "G-102", 8, 101, "ld and ld2"); }
  SECTION("unknown tensor") { expectDiag("graph_unknown_tensor.yaml", "G-106", 7, 47, "ops[0].tensor: unknown tensor 'c'"); }
  SECTION("unknown op key") {
    Diagnostic d = expectDiag("graph_unknown_key.yaml", "G-109", 8, 35, "'b'");
    CHECK(d.message.find("ops[1].b") != std::string::npos);
  }
  SECTION("bad expression") { expectDiag("graph_bad_expr.yaml", "G-107", 5, 15, "'N*'"); }
  SECTION("duplicate op name") { expectDiag("graph_dup_op.yaml", "G-108", 9, 12, "'sl'"); }
  SECTION("bad tensor role") { expectDiag("graph_bad_role.yaml", "G-114", 4, 29, "tensors.a.role"); }
  SECTION("malformed YAML") {
    Diagnostic d = graphError("graph_malformed.yaml");
    CHECK(d.id == "Y-001");
    CHECK(d.loc.line >= 8);
  }
}

namespace {
/// Loads inline graph text and returns all diagnostics (empty if it loaded).
std::vector<Diagnostic> textErrors(const std::string& text) {
  try {
    loadText(text, "inline.yaml");
  } catch (const DiagError& e) {
    return e.diags;
  }
  return {};
}

const char* kHead =
    "stepgraph: t\n"                              // 1
    "symbols: {N: 4}\n"                           // 2
    "tensors:\n"                                  // 3
    "  a: {shape: [N, 16], role: input}\n"        // 4
    "  b: {shape: [N, 16], role: output}\n";      // 5
const char* kOps =
    "ops:\n"                                                                                          // 6
    "  - {name: ld, op: LinearOffChipLoad, tensor: a, tile: [N, 16], iter: [1], strides: [[0, 0]], out: s}\n"  // 7
    "  - {name: sl, op: Map, fn: silu, in: s, out: t}\n"                                              // 8
    "  - {name: st, op: LinearOffChipStore, in: t, tensor: b, iter: [1], strides: [[0, 0]]}\n";       // 9

// The base text kHead + kOps, with extra (top-level lines) between them.
std::string base(const std::string& extra = "") { return kHead + extra + kOps; }

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

void expectOne(const std::vector<Diagnostic>& d, const char* id, int line, int col, const char* mentions) {
  REQUIRE(d.size() == 1);
  INFO(formatDiagnostic(d[0]));
  CHECK(d[0].id == id);
  CHECK(d[0].loc.line == line);
  CHECK(d[0].loc.col == col);
  CHECK(d[0].message.find(mentions) != std::string::npos);
}
}  // namespace

TEST_CASE("graph loader: more diagnostics", "[graph][diag]") {
  SECTION("the base text loads") { CHECK(textErrors(base()).empty()); }
  SECTION("missing required top-level key") {
    expectOne(textErrors(kHead), "G-111", 1, 1, "'ops'");
  }
  SECTION("unknown top-level key") {
    expectOne(textErrors(base("extra: 1\n")), "G-109", 6, 1, "'extra'");
  }
  SECTION("duplicate key") {
    expectOne(textErrors(base("  a: {shape: [N, 16], role: input}\n")), "G-115", 6, 3, "'a'");
  }
  SECTION("symbol value out of range / wrong type") {
    expectOne(textErrors(replaced(base(), "{N: 4}", "{N: 0}")), "G-113", 2, 14, "symbols.N");
    expectOne(textErrors(replaced(base(), "stepgraph: t", "stepgraph: [t]")), "G-112", 1, 12, "stepgraph");
  }
  SECTION("symbol defined twice") {
    expectOne(textErrors(base("schedule: {N: 2}\n")), "G-117", 6, 12, "'N'");
  }
  SECTION("tensor shape that does not evaluate") {
    expectOne(textErrors(replaced(base(), "[N, 16], role: output", "[M, 16], role: output")), "G-116", 5, 15,
              "'M'");
  }
  SECTION("wrong number of streams") {
    auto d = textErrors(replaced(base(), "in: s, out: t", "in: [s, s2], out: t"));
    REQUIRE(!d.empty());
    // s2 also dangles; the arity error comes first (sorted by location).
    CHECK(d[0].id == "G-118");
    CHECK(d[0].loc.line == 8);
    CHECK(d[0].message.find("ops[1].in") != std::string::npos);
  }
  SECTION("one op naming a stream twice (found by fuzz_graph: the op was looked up before it existed)") {
    // A Map of two inputs is also an arity error (G-118, first); the G-103 names the op twice.
    auto d = textErrors(replaced(base(), "in: s, out: t", "in: [s, s], out: t"));
    REQUIRE(d.size() == 2);
    CHECK(d[1].id == "G-103");
    CHECK(d[1].message == "ops[1].in[1]: stream 's' is consumed by both sl and sl; use Broadcast");
  }
  SECTION("declared but unused stream") {
    expectOne(textErrors(base("streams:\n  z: {shape: [1], tile: [N, 16]}\n")), "G-119", 7, 3, "'z'");
  }
  SECTION("bad stream declaration") {
    expectOne(textErrors(base("streams:\n  s: {shape: [1], tile: [N, 16, 2]}\n")), "G-113", 7, 25, "streams.s.tile");
  }
  SECTION("several errors are reported together, in file order") {
    auto d = textErrors(replaced(replaced(base(), "tensor: a", "tensor: q"), "op: Map,", "op: Mop,"));
    REQUIRE(d.size() == 2);
    CHECK(d[0].id == "G-106");
    CHECK(d[1].id == "G-101");
  }
}
