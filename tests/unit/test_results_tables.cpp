// The committed result tables against the page that names their columns: every CSV in
// docs/results/ is listed in docs/results/README.md ("CSV columns"), and its first line is
// exactly the listed column list (tools read these headers). Also a few columns the other
// docs name in prose, checked as they are spelled there.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include "support/files.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kResults = fs::path(STEPGEN_ROOT) / "docs" / "results";

std::string firstLine(const fs::path& p) {
  const std::string text = stepgen::readText(p);
  return text.substr(0, text.find('\n'));
}

// "| `name.csv` | `tag` | `a`, `b`, `c` |" -> name.csv -> "a,b,c"
std::map<std::string, std::string> listedColumns() {
  std::ifstream in(kResults / "README.md");
  REQUIRE(in.good());
  const std::regex row(R"(^\| `([A-Za-z0-9_.]+\.csv)` \| [^|]* \| (.*) \|$)");
  std::map<std::string, std::string> m;
  std::string line;
  while (std::getline(in, line)) {
    std::smatch g;
    if (!std::regex_match(line, g, row)) continue;
    std::string cols;
    const std::string cells = g[2];
    const std::regex cell("`([^`]+)`");
    for (auto it = std::sregex_iterator(cells.begin(), cells.end(), cell); it != std::sregex_iterator(); ++it)
      cols += (cols.empty() ? "" : ",") + (*it)[1].str();
    m[g[1]] = cols;
  }
  return m;
}

}  // namespace

TEST_CASE("results tables: CSV headers equal the columns docs/results/README.md lists", "[results]") {
  const auto listed = listedColumns();
  REQUIRE(listed.size() >= 10);
  int seen = 0;
  for (const auto& e : fs::directory_iterator(kResults)) {
    if (e.path().extension() != ".csv") continue;
    const std::string name = e.path().filename().string();
    INFO(name);
    REQUIRE(listed.count(name) == 1);
    CHECK(firstLine(e.path()) == listed.at(name));
    ++seen;
  }
  CHECK(seen == int(listed.size()));
}

TEST_CASE("results tables: columns the other docs name exist", "[results]") {
  // (file, column, the doc that names it)
  const char* named[][3] = {
      {"random_graphs.csv", "fifo_invariant", "docs/random_graphs.md"},
      {"fpga.csv", "lut_levels", "docs/fpga.md"},
      {"fpga.csv", "pnr_status", "docs/results/fpga.md"},
      {"dynpar.csv", "strategy", "docs/results/dynpar.md"},
      {"dynpar.csv", "outputs_bit_exact", "docs/results/dynpar.md"},
      {"timemux_regions.csv", "utilization", "docs/results/timemux_regions.md"},
      {"sections.csv", "switch_cycles", "docs/results/sections.md"},
  };
  for (const auto& n : named) {
    INFO(n[0] << " " << n[1] << " (" << n[2] << ")");
    const std::string text = stepgen::readText(fs::path(STEPGEN_ROOT) / n[2]);
    CHECK(text.find(std::string("`") + n[1] + "`") != std::string::npos);
    const std::string header = "," + firstLine(kResults / n[0]) + ",";
    CHECK(header.find(std::string(",") + n[1] + ",") != std::string::npos);
  }
}
