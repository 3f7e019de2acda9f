// The random-fabric generator (buildRandomArch): every seed loads, keeps the layout and the
// value sets its docstring promises, and holds a random graph drawn within its unit counts.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "arch/unit_catalogue.hpp"
#include "builders/random_arch.hpp"
#include "builders/random_graph.hpp"
#include "driver/pipeline.hpp"
#include "support/files.hpp"

using namespace stepgen;

TEST_CASE("random fabrics: load, keep their layout and value sets, and hold a graph", "[random]") {
  CHECK(buildRandomArch(4) == buildRandomArch(4));
  CHECK(buildRandomArch(4) != buildRandomArch(5));
  const auto dir = std::filesystem::temp_directory_path() / "sg_random_arch";
  std::set<int> reaches, lanes, contexts;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    INFO("seed " << seed);
    const std::string text = buildRandomArch(seed);
    writeFile(dir / "arch.yaml", text);
    const ArchModel a = loadArch((dir / "arch.yaml").string());
    CHECK(a.name == "random_a" + std::to_string(seed));
    CHECK((a.cols >= 3 && a.cols <= 6 && a.rows >= 2 && a.rows <= 4));
    int cu = 0, ag = 0, mu = 0;
    for (const UnitSite& u : a.units) {
      const bool edge = u.x == 0 || u.x == a.cols - 1;
      CHECK((u.kind == UnitKind::AddressGen) == edge);
      cu += u.kind == UnitKind::Compute, ag += u.kind == UnitKind::AddressGen, mu += u.kind == UnitKind::Memory;
    }
    CHECK(ag == 2 * a.rows);
    CHECK(cu >= 1);
    // Up to two memory units drawn; an even seed's are then made three (the combine cluster's).
    if (seed % 2 == 0 && mu > 0 && (a.cols - 2) * a.rows >= 4) CHECK(mu == 3);
    else CHECK(mu <= 2);
    CHECK(text.rfind(fmt::format("# random fabric (buildRandomArch) of seed {}: {} cu, {} ag, {} mu\n", seed, cu, ag, mu), 0) == 0);
    CHECK(a.cu.flopsPerCycle == 2 * a.cu.lanes);
    CHECK(a.cu.dynamicTiles() == (seed % 2 == 0));
    CHECK(a.cu.hasAttn() == (seed % 4 == 2));  // the attention datapath on seeds 2 mod 4
    CHECK(a.cuBankable());
    reaches.insert(a.link.reach), lanes.insert(a.cu.lanes), contexts.insert(a.contexts);
    if (seed <= 10) {  // a graph within its units maps onto it whole
      RandomGraphLimits lim;
      lim.maxAg = ag, lim.maxCu = cu;
      writeFile(dir / "graph.yaml", buildRandomGraph(seed, lim).yaml);
      const CompileResult c = compileProgram((dir / "arch.yaml").string(), (dir / "graph.yaml").string());
      CHECK(c.mapping.sections == 1);
    }
  }
  CHECK(reaches == std::set<int>{2, 3, 4});
  CHECK(lanes == std::set<int>{4, 8, 16});
  CHECK(contexts == std::set<int>{1, 2, 4});
  std::filesystem::remove_all(dir);
}
