// support/files.hpp: writeFile makes the folders a path names, and takes a bare file name
// (`stepgen synth --csv rows.csv` wrote nothing and failed after the whole run before).
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "support/files.hpp"

using namespace stepgen;
namespace fs = std::filesystem;

TEST_CASE("writeFile: a bare file name and a nested path are both written", "[files]") {
  const fs::path dir = fs::temp_directory_path() / ("stepgen_files_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  try {
    writeFile("bare.csv", "a,b\n");
    writeFile(fs::path("x") / "y" / "nested.txt", "n");
  } catch (...) {
    fs::current_path(cwd);
    throw;
  }
  fs::current_path(cwd);
  CHECK(readText(dir / "bare.csv") == "a,b\n");
  CHECK(readText(dir / "x" / "y" / "nested.txt") == "n");
  fs::remove_all(dir);
}
