// planBuffers (map/buffering.hpp) on graphs whose waits are counted by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "builders/rmsnorm.hpp"
#include "ir/graph.hpp"
#include "map/buffering.hpp"
#include "passes/shape_check.hpp"
#include "support/files.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {


BufferPlan planOf(const StepGraph& g, const ArchModel& a) { return planBuffers(g, checkShapes(g), a); }

}  // namespace

// tests/data/graphs/residual_accum.yaml: x (8 groups of 8 tiles of 1 x 64 words) is broadcast
// to an Accum(b = 1), which takes a group's 8 tiles before it emits, and to the add. The add
// can take nothing before the sum, which comes with the group's 8th tile, so the short path
// must hold 8 tiles: 8 x 64 x 4 = 2,048 B, against one 2-beat FIFO of 64-byte beats (128 B).
// One group (Bufferize b = 1) is those 8 tiles.
TEST_CASE("buffering: a residual around an Accum needs a buffer of one group", "[buffering]") {
  const StepGraph g = loadGraph(root() + "/tests/data/graphs/residual_accum.yaml");
  ArchModel a = loadArch(root() + "/arch/default.yaml");  // 2 memory units, RepeatStatic takes one
  BufferPlan p = planOf(g, a);
  REQUIRE(p.pairs.size() == 1);
  const Reconvergence& r = p.pairs[0];
  CHECK(g.op(r.fork).name == "bx");
  CHECK(g.op(r.join).name == "zip_res");
  CHECK(g.op(r.joinUnit).name == "add_res");
  CHECK(g.op(r.holder).name == "sum");
  CHECK(g.stream(r.shortStream).name == "x_res");
  CHECK(r.needBytes == 8 * 64 * 4);
  CHECK(r.fifoBytes == 2 * 64);
  CHECK(r.bufferDims == 1);
  CHECK(r.bufferBytes == 8 * 64 * 4);
  CHECK(r.streamBytes == 64 * 64 * 4);
  CHECK(p.freeMemoryUnits == 1);
  CHECK(r.choice == BufferChoice::MemoryUnit);
  CHECK(p.bufferBytes == 2048);

  // The rewritten graph: Bufferize(b = 1) -> Streamify(1) -> Flatten(1, 2) in front of the
  // join, the same stream shape at the join as before.
  const StepGraph b = insertBuffers(g, p);
  const ShapeResult sb = checkShapes(b);
  REQUIRE(b.ops.size() == g.ops.size() + 3);
  const Op& keep = b.ops[g.ops.size()];
  CHECK(keep.kind == OpKind::Bufferize);
  CHECK(keep.attrs.at("b").scalar == "1");
  const Op& zip = b.op(r.join);
  CHECK(b.stream(zip.inputs[0]).name == "x_res.buffered");
  CHECK(sb.types.at(size_t(zip.inputs[0].v)).shape.size() == 2);

  // No memory unit free (the arch's second one removed): the join goes to a later section.
  for (UnitSite& u : a.units)
    if (u.kind == UnitKind::Memory && u.x == 3) u.kind = UnitKind::Empty;
  p = planOf(g, a);
  CHECK(p.freeMemoryUnits == 0);
  CHECK(p.pairs.at(0).choice == BufferChoice::SectionCut);
  CHECK(p.bufferBytes == 2 * 64 * 64 * 4);  // the short stream stored and loaded once
}

// A memory-unit buffer replays a group only once all of it is in, and until then the long
// path must take in what the fork sends it. tests/data/graphs/rmsnorm_residual_*.yaml on
// arch/onnx_small.yaml (64-byte beats, FIFO depth 2): the long path x*x, rowsum, *c, +e,
// rsqrt runs on 5 units, so 6 links of 2 beats = 768 B, and holds one row (the rowsum's) before
// the join. A tile of one row of 128 words: the row is the tile, 512 B; it takes in
// 512 + 768 = 1,280 B >= the buffer's one tile of 512 B: a buffer. A tile of 16 rows of 64
// words: a row is 256 B; 256 + 768 = 1,024 B < the 4,096-byte tile: a buffer would deadlock
// (Verilator hangs on it: e2e_rmsnorm_residual_16row checks the cut), so the join goes to a
// later section.
TEST_CASE("buffering: a buffer whose group the long path cannot take in is not chosen", "[buffering]") {
  const ArchModel a = loadArch(root() + "/arch/onnx_small.yaml");
  for (const auto& [file, absorb, group, choice] :
       {std::tuple{"rmsnorm_residual_1row", 512 + 768, 512, BufferChoice::MemoryUnit},
        std::tuple{"rmsnorm_residual_16row", 256 + 768, 4096, BufferChoice::SectionCut}}) {
    CAPTURE(file);
    const StepGraph g = loadGraph(root() + "/tests/data/graphs/" + file + ".yaml");
    const BufferPlan p = planOf(g, a);
    const auto r = std::find_if(p.pairs.begin(), p.pairs.end(), [&](const Reconvergence& x) { return x.needBytes > x.fifoBytes; });
    REQUIRE(r != p.pairs.end());
    CHECK(g.op(r->join).name == "n12_zip");
    CHECK(r->longAbsorbBytes == absorb);
    CHECK(r->bufferBytes == group);
    CHECK(r->choice == choice);
  }
}

// RMSNorm's squares: x and its Broadcast copy meet at once at the Zip (both paths hold one
// tile), so the link FIFOs are enough and nothing is added.
TEST_CASE("buffering: paths that hold the same add nothing, and no Broadcast means no pair", "[buffering]") {
  const auto dir = std::filesystem::temp_directory_path() / "sg_buffering_rms";
  writeFile(dir / "graph.yaml", buildRmsNormGraph(RmsNormParams{}));
  const StepGraph g = loadGraph((dir / "graph.yaml").string());
  const ArchModel a = loadArch(root() + "/tests/data/arch_dyn_ops.yaml");
  const BufferPlan p = planOf(g, a);
  REQUIRE(p.pairs.size() == 1);
  CHECK(p.pairs[0].needBytes == 0);
  CHECK(p.pairs[0].choice == BufferChoice::Fifo);
  CHECK_FALSE(p.any());
  const StepGraph nb = loadGraph(root() + "/tests/data/graphs/buffer.yaml");
  CHECK(planOf(nb, loadArch(root() + "/arch/default.yaml")).pairs.empty());
}

// A Parallelize deals element 2k to q0 and 2k + 1 to q1, and the Zip takes the k-th of
// each together: q0's path holds its tile while the fork moves on to q1's. The short path
// has two links of room (the join's input FIFO and the units' shared input FIFO), at depth
// 1 on 64-byte beats 128 B: a 2-beat tile ([1, 32], 128 B) fits, a 3-beat one ([1, 48],
// 192 B) needs a buffer of one tile (the RTL deadlocks without it: e2e_parallelize_reconverge*),
// and at depth 2 (256 B) a 4-beat one ([1, 64]) fits.
TEST_CASE("buffering: a Parallelize whose outputs meet again holds one tile on the earlier output's path", "[buffering]") {
  const ArchModel d1 = loadArch(root() + "/tests/data/arch_random_a4_3mu_fifo1.yaml");
  const ArchModel d2 = loadArch(root() + "/tests/data/arch_random_a4_3mu.yaml");
  REQUIRE(d1.link.fifoDepth == 1);
  REQUIRE(d2.link.fifoDepth == 2);
  struct Case {
    const char* graph;
    const ArchModel& arch;
    int64_t tileBytes, fifoBytes;
    BufferChoice choice;
  };
  for (const Case& c : {Case{"parallelize_reconverge", d1, 32 * 4, 128, BufferChoice::Fifo},
                        Case{"parallelize_reconverge_3beat", d1, 48 * 4, 128, BufferChoice::MemoryUnit},
                        Case{"parallelize_reconverge_4beat", d2, 64 * 4, 256, BufferChoice::Fifo}}) {
    const StepGraph g = loadGraph(root() + "/tests/data/graphs/" + c.graph + ".yaml");
    const BufferPlan p = planOf(g, c.arch);
    INFO(c.graph);
    REQUIRE(p.pairs.size() == 1);
    const Reconvergence& r = p.pairs[0];
    CHECK(g.op(r.fork).name == "par");
    CHECK(g.stream(r.shortStream).name == "q0");
    CHECK(r.needBytes == c.tileBytes);
    CHECK(r.fifoBytes == c.fifoBytes);
    CHECK(r.choice == c.choice);
    if (c.choice == BufferChoice::MemoryUnit) CHECK(r.bufferBytes == c.tileBytes);
  }
}
