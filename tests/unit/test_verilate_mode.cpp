// hierarchicalByDefault: verify verilates a fabric hierarchically from 16 compute units on.
// The counts are read from the arch files' unit grids here, independently of UnitCatalogue.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <string>

#include "arch/arch_model.hpp"
#include "driver/rtl_run.hpp"

using namespace stepgen;

namespace {

// Compute units in an arch file: the "cu" entries of its `units:` rows.
int cuEntries(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  int n = 0;
  const std::regex cu(R"(\bcu\b)");
  bool inUnits = false;
  while (std::getline(f, line)) {
    line = line.substr(0, line.find('#'));
    if (line.rfind("units:", 0) == 0) {
      inUnits = true;
      continue;
    }
    if (line.find_first_not_of(' ') == std::string::npos) continue;  // a comment line
    if (inUnits && line.rfind("  - [", 0) != 0) inUnits = false;
    if (inUnits) n += int(std::distance(std::sregex_iterator(line.begin(), line.end(), cu), std::sregex_iterator()));
  }
  return n;
}

}  // namespace

TEST_CASE("verify verilates fabrics of 16 or more compute units hierarchically", "[verilate]") {
  const std::string root = STEPGEN_ROOT;
  for (const char* f : {"arch/small.yaml", "arch/default.yaml", "arch/step_validation.yaml", "arch/attention.yaml",
                        "tests/data/arch_grid8.yaml", "arch/gqa.yaml",
                        "tests/data/arch_random_a4_fifo1.yaml", "arch/moe.yaml"}) {
    const std::string path = root + "/" + f;
    const int n = cuEntries(path);
    CAPTURE(f, n);
    REQUIRE(n > 0);
    CHECK(hierarchicalByDefault(loadArch(path)) == (n >= 16));
  }
  // Both sides of the threshold are among the files.
  CHECK(cuEntries(root + "/arch/default.yaml") < 16);
  CHECK(cuEntries(root + "/tests/data/arch_grid8.yaml") >= 16);
}
