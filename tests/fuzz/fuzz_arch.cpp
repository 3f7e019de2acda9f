// Fuzz target: the architecture loader (arch YAML -> ArchModel) and the configuration layout
// and unit catalogue derived from it. Bad input must end in a DiagError.
#include "arch/arch_model.hpp"
#include "arch/config_layout.hpp"
#include "arch/unit_catalogue.hpp"
#include "fuzz_input.hpp"
#include "support/diag.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepgen;
  fuzz::expectOnly<DiagError>("fuzz_arch", [&] {
    const ArchModel a = loadArch(fuzz::asFile(data, size, ".yaml"));
    if (a.unbounded) return;
    const ConfigLayout l = buildConfigLayout(a);
    (void)l;
    const UnitCatalogue cat(a);
    (void)cat;
  });
  return 0;
}
