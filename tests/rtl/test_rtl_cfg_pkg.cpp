// The unit RTL tests verilate the templates against a committed package,
// tests/rtl/sg_cfg_pkg.sv (verilate() runs at configure time, so the file must exist
// before the build). This test requires it to equal emitConfigPackage(buildConfigLayout(a))
// for the test architecture rtlu::testArch().
//
//   test_rtl_cfg_pkg <path/to/sg_cfg_pkg.sv>           check (exit 0 when equal)
//   test_rtl_cfg_pkg <path/to/sg_cfg_pkg.sv> --write   rewrite the committed copy
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "arch/config_layout.hpp"
#include "rtl_unit_util.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: test_rtl_cfg_pkg <sg_cfg_pkg.sv> [--write]\n";
    return 2;
  }
  const std::string want = stepgen::emitConfigPackage(stepgen::buildConfigLayout(rtlu::testArch()));
  const std::string path = argv[1];
  if (argc > 2 && std::string(argv[2]) == "--write") {
    std::ofstream(path, std::ios::binary) << want;
    std::cout << "wrote " << path << "\n";
    return 0;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << path << "\n";
    return 1;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str() != want) {
    std::cerr << path << " differs from emitConfigPackage(buildConfigLayout(rtlu::testArch())).\n"
              << "Regenerate: test_rtl_cfg_pkg " << path << " --write\n--- expected:\n"
              << want;
    return 1;
  }
  std::cout << "ok: " << path << " equals the emitter output\n";
  return 0;
}
