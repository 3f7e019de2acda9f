// Every test process gets a temporary folder of its own: ctest runs each test case as its
// own process, two at a time, and several cases write examples under fixed names in
// std::filesystem::temp_directory_path() (which reads TMPDIR). Two cases writing the same
// example folder at once made one of them read a half-renamed folder.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

struct PrivateTmpdir : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  std::filesystem::path dir;

  void testRunStarting(Catch::TestRunInfo const&) override {
    dir = std::filesystem::temp_directory_path() / ("stepgen_tests." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    ::setenv("TMPDIR", dir.c_str(), 1);
  }
  void testRunEnded(Catch::TestRunStats const&) override {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

CATCH_REGISTER_LISTENER(PrivateTmpdir)
