// The timing model (generator/model/timing/): deadlock verdicts that agree with the RTL,
// link FIFOs that decouple producers from consumers, and unit models chosen and sized by
// the configuration image rather than by graph attributes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>

#include "arch/config_layout.hpp"
#include "builders/swiglu.hpp"
#include "driver/pipeline.hpp"
#include "model/model.hpp"
#include "model/timing/engine.hpp"
#include "test_common.hpp"

using namespace stepgen;

namespace {

struct TimingRun {
  CompileResult c;
  std::map<std::string, Matrix> in;
};

// `buffering` false: the graph as written, for the deadlock tests (map/buffering.hpp would
// add what their short paths lack).
TimingRun compileOn(const std::string& arch, const std::string& graph, bool buffering = true) {
  TimingRun r{compileGraph(root() + "/" + arch, root() + "/" + graph, 1, true, buffering), {}};
  r.in = loadInputs(r.c.graph, "", 1);
  return r;
}

TimingResult timingOf(const TimingRun& r, const ConfigImage& img) {
  return runModel(r.c.graph, r.c.shapes, r.c.mapping, r.c.arch, r.c.layout, img, r.in).timing;
}
}  // namespace

TEST_CASE("timing: a diamond whose streaming path holds a tile in its FIFOs finishes, as in the RTL", "[model][timing]") {
  // 4-beat tiles broadcast to silu (2-beat input FIFO, an output register, then the add's
  // 2-beat FIFO: 5 beats of slack) and to a memory unit that needs the whole tile before the
  // add gets its other operand. The RTL (stepgen verify, default fabric) finishes in 259
  // cycles with bit-exact outputs; a lock-step model called it a deadlock.
  const TimingRun r = compileOn("arch/default.yaml", "tests/data/graphs/diamond.yaml");
  const TimingResult t = timingOf(r, r.c.image);
  REQUIRE_FALSE(t.deadlock);
  CHECK(t.stuck.empty());
  CHECK(std::abs(double(t.cycles) - 259.0) <= 0.05 * 259.0);
}

TEST_CASE("timing: a broadcast whose other path must buffer more than the FIFO holds deadlocks, naming the stream",
          "[model][timing]") {
  // tests/data/graphs/deadlock.yaml: the buffer needs 4 one-beat tiles of x before the add
  // has its second operand; the add's 2-beat FIFO holds 2, so x stops at tile 2 (the RTL
  // watchdog reports the same, tests/rtl/deadlock.sh).
  const TimingRun r = compileOn("arch/default.yaml", "tests/data/graphs/deadlock.yaml", false);
  const TimingResult t = timingOf(r, r.c.image);
  REQUIRE(t.deadlock);
  REQUIRE_FALSE(t.stuck.empty());
  CHECK(t.stuck.front().rfind("x (ld -> add) (ld -> buf) at tile 2 of 9: offered, not taken by add", 0) == 0);
}

TEST_CASE("timing: unit models take their parameters from the configuration image", "[model][timing]") {
  // The model reads passes and K from the matmul units' fields: doubling `passes` in the
  // image (and nothing in the graph) must lengthen the run, as it would the RTL's.
  const TimingRun r = compileOn("arch/default.yaml", "examples/swiglu/graph.yaml");
  const TimingResult base = timingOf(r, r.c.image);
  ConfigImage img = r.c.image;
  const KindLayout& cu = r.c.layout.cu;
  const size_t func = size_t(&cu.field("func") - cu.fields.data());
  const size_t passes = size_t(&cu.field("passes") - cu.fields.data());
  int matmuls = 0;
  for (size_t s = 0; s < r.c.layout.slots.size(); ++s)
    if (r.c.layout.slots[s].kind == UnitKind::Compute && img.values[s][0][func] == uint64_t(CuFunc::Matmul))
      img.values[s][0][passes] *= 8, ++matmuls;
  REQUIRE(matmuls == 3);
  const TimingResult slow = timingOf(r, img);
  REQUIRE_FALSE(slow.deadlock);
  CHECK(slow.cycles > base.cycles);
}

TEST_CASE("timing: concurrent loads share the DRAM channels in request order, as in the RTL", "[model][timing]") {
  // The validation sweep's SwiGLU point tile_b 32, tile_f 256 on arch/step_validation.yaml:
  // x, wg, wu and wd load at the same time (1024-beat weight tiles, one beat per cycle of
  // DRAM bandwidth in all), and the matmul loads one operand bank at a time, so the x and
  // wd loads stall until the other operand of their tile is in. The RTL (stepgen sweep,
  // Verilator) runs it in 15511 cycles. A model that placed each load's tile on the
  // channels whole, the first load resolved first, gave 14624 (-5.7 %).
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "stepgen_test_timing_dram";
  fs::create_directories(dir);
  const fs::path graph = dir / "swiglu_tb32_tf256.yaml";
  std::ofstream(graph) << buildSwigluGraph(SwigluParams{64, 256, 512, 32, 256});
  TimingRun r{compileGraph(root() + "/arch/step_validation.yaml", graph.string()), {}};
  r.in = loadInputs(r.c.graph, "", 1);
  const TimingResult t = timingOf(r, r.c.image);
  REQUIRE_FALSE(t.deadlock);
  CHECK(std::abs(double(t.cycles) - 15511.0) <= 0.01 * 15511.0);
  fs::remove_all(dir);
}

TEST_CASE("timing: a stream kept in a memory unit skips the DRAM round trip of the switch", "[model][timing][sections]") {
  // A 2-layer SwiGLU stack on arch/default.yaml runs in 2 sections; layer 0's output (4096 B)
  // crosses the cut. Through DRAM the second section starts only once the store's last write
  // has completed, and its first beat waits for the load's first response (DRAM latency 40
  // each); kept in a memory unit neither happens. The store issues its last write in the
  // cycle it takes the last beat, and the memory unit's section ends two cycles after it
  // takes the same beat (its DONE), so the second section starts 40 - 2 cycles earlier and
  // the run ends at least 2 x 40 - 2 earlier. The RTL (stepgen verify --sections 2 --carry
  // auto | dram) starts section 1 at 9884 and 9922 (38 apart) and runs 19654 and 19756 cycles.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "stepgen_test_timing_keep";
  fs::create_directories(dir);
  const fs::path graph = dir / "mlp2.yaml";
  std::ofstream(graph) << buildSwigluStack(SwigluParams{16, 64, 128, 8, 32}, 2);
  auto run = [&](bool onChip) {
    TimingRun r{compileGraph(root() + "/arch/default.yaml", graph.string(), 1, onChip), {}};
    r.in = loadInputs(r.c.graph, "", 1);
    return r;
  };
  const TimingRun kept = run(true), dram = run(false);
  REQUIRE(kept.c.sections.carriedOnchipBytes() == 4096);
  REQUIRE(dram.c.sections.carriedDramBytes() == 4096);
  const TimingResult k = runModel(kept.c.graph, kept.c.shapes, kept.c.mapping, kept.c.arch, kept.c.programLayout,
                                  kept.c.image, kept.in).timing;
  const TimingResult d = runModel(dram.c.graph, dram.c.shapes, dram.c.mapping, dram.c.arch, dram.c.programLayout,
                                  dram.c.image, dram.in).timing;
  REQUIRE_FALSE(k.deadlock);
  REQUIRE(k.sectionStart.size() == 2);
  REQUIRE(d.sectionStart.size() == 2);
  CHECK(d.sectionStart[1] - k.sectionStart[1] == 40 - 2);
  CHECK(d.cycles - k.cycles >= 2 * 40 - 2);
  CHECK(k.offchipWriteBytes == d.offchipWriteBytes - 4096);
  CHECK(k.offchipReadBytes == d.offchipReadBytes - 4096);
  CHECK(std::abs(double(k.cycles) - 19654.0) <= 0.01 * 19654.0);
  CHECK(std::abs(double(d.cycles) - 19756.0) <= 0.01 * 19756.0);
  fs::remove_all(dir);
}

TEST_CASE("timing: a row reduction whose Broadcast partner waits for it deadlocks on short FIFOs", "[model][timing]") {
  // The single-pass attention graph: the scores go to rowmax (4 beats a row before it emits)
  // and to the subtraction that waits for the running max; with 2-beat FIFOs the scores stop
  // after 2 beats (the RTL's watchdog reports the same: tests/rtl/deadlock.sh via
  // e2e_deadlock_single_pass_fifo2). With arch/attention.yaml's 8-beat FIFOs the graph runs.
  const TimingRun bad = compileOn("tests/data/arch_attention_fifo2.yaml", "tests/data/graphs/attention_single_pass.yaml", false);
  const TimingResult t = timingOf(bad, bad.c.image);
  REQUIRE(t.deadlock);
  REQUIRE_FALSE(t.stuck.empty());
  CHECK(t.stuck.front().rfind("s (scores -> row_max) (scores -> shift) at tile 0 of 3: offered, not taken by row_max, shift", 0) == 0);
  const TimingRun good = compileOn("arch/attention.yaml", "tests/data/graphs/attention_single_pass.yaml");
  CHECK_FALSE(timingOf(good, good.c.image).deadlock);
}

namespace {
// A unit that moves on its second step whatever its links do: the sweeps that step only
// what is near a change never call it again, so only STEPGEN_TIMING_CHECK's full sweep sees it.
struct MovesUnprompted : timing::Unit {
  int calls = 0;
  bool step(timing::TimingModel&) override { return ++calls == 2; }
  int64_t endFor(timing::TimingModel&, size_t, int64_t) override { return timing::kUnknown; }
};
}  // namespace

TEST_CASE("timing: STEPGEN_TIMING_CHECK catches a unit that moves with nothing near it moving", "[model][timing]") {
  const ArchModel a = loadArch(root() + "/arch/default.yaml");
  const char* was = std::getenv("STEPGEN_TIMING_CHECK");
  const std::string before = was ? was : "";
  auto calls = [&](const char* check) {
    ::setenv("STEPGEN_TIMING_CHECK", check, 1);
    timing::TimingModel m(a);
    m.units.push_back(std::make_unique<MovesUnprompted>());
    m.run();
    return static_cast<const MovesUnprompted&>(*m.units[0]).calls;
  };
  CHECK(calls("0") == 1);  // unchecked: stepped once, never again
  CHECK_THROWS_AS(calls("1"), std::logic_error);
  if (was) ::setenv("STEPGEN_TIMING_CHECK", before.c_str(), 1);
  else ::unsetenv("STEPGEN_TIMING_CHECK");
}
