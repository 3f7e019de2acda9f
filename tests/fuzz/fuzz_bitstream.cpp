// Fuzz target: the bitstream decoder (`stepgen decode`) against arch/default.yaml's layout:
// bytes -> words -> ConfigImage -> the readable .cfg text. Its documented error is
// std::runtime_error (the command reports it as R-405).
#include <stdexcept>
#include <vector>

#include "arch/arch_model.hpp"
#include "arch/config_layout.hpp"
#include "bitstream/config_image.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepgen;
  static const ArchModel arch = loadArch(std::string(STEPGEN_ROOT) + "/arch/default.yaml");
  static const ConfigLayout layout = buildConfigLayout(arch);
  fuzz::expectOnly<std::runtime_error>("fuzz_bitstream", [&] {
    const std::vector<uint32_t> w = bytesToWords(std::vector<uint8_t>(data, data + size));
    (void)configText(decodeBitstream(w, layout), layout, arch);
  });
  return 0;
}
