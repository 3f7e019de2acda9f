// Fuzz target: the .npy reader shared by the model and the harness (sim/common/npy.hpp). Its
// documented error is std::runtime_error naming the file (the driver turns it into R-401).
#include <stdexcept>

#include "common/npy.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepgen;
  fuzz::expectOnly<std::runtime_error>("fuzz_npy", [&] {
    const NpyArray a = readNpy(fuzz::asFile(data, size, ".npy"));
    (void)a.rows();
    (void)a.cols();
  });
  return 0;
}
