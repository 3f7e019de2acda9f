// Fuzz target: the MoE routing-trace CSV reader (support/routing_trace.hpp), 128 experts as the
// Qwen3 traces. Bad input must end in a DiagError.
#include "fuzz_input.hpp"
#include "support/diag.hpp"
#include "support/routing_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepgen;
  fuzz::expectOnly<DiagError>("fuzz_trace", [&] {
    const RoutingTrace t = readRoutingTrace(fuzz::asFile(data, size, ".csv"), 128);
    (void)t.tokensPerExpert();
  });
  return 0;
}
