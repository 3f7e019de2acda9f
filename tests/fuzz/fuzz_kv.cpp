// Fuzz target: the KV-length CSV reader (support/kv_lengths.hpp) and the scaling the study
// applies. Bad input must end in a DiagError.
#include "fuzz_input.hpp"
#include "support/diag.hpp"
#include "support/kv_lengths.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepgen;
  fuzz::expectOnly<DiagError>("fuzz_kv", [&] {
    for (const KvBatch& b : readKvBatches(fuzz::asFile(data, size, ".csv"))) (void)scaledKvLengths(b.lengths, 8);
  });
  return 0;
}
