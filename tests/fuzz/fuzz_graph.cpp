// Fuzz target: the graph loader (graph YAML -> StepGraph) and the shape check over what it
// loaded. Bad input must end in a DiagError.
#include "fuzz_input.hpp"
#include "ir/graph.hpp"
#include "passes/shape_check.hpp"
#include "support/diag.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stepgen;
  fuzz::expectOnly<DiagError>("fuzz_graph", [&] {
    const StepGraph g = loadGraph(fuzz::asFile(data, size, ".yaml"));
    (void)checkShapes(g);
  });
  return 0;
}
