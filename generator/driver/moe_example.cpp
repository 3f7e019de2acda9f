#include "driver/moe_example.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "builders/moe_regions.hpp"
#include "driver/examples.hpp"
#include "driver/inputs.hpp"
#include "driver/staging.hpp"
#include "support/routing_trace.hpp"

namespace stepgen {

void writeMoeExample(const MoeParams& p, const std::string& tracePath, const std::string& dir, uint32_t seed,
                     bool inputs, bool synthetic) {
  if (p.router) {  // the layer routes itself: no trace
    writeGraphExample(buildMoeGraph(p), inputs ? moeInputs(p, {}, seed) : std::map<std::string, Matrix>{}, dir, seed,
                      /*fixedOnly=*/true);
    return;
  }
  RoutingTrace tr = readRoutingTrace(tracePath, int(p.experts));
  if (synthetic && int64_t(tr.experts.size()) < p.batch) tr = syntheticRoutingTrace(tr, p.batch, seed);
  if (int64_t(tr.experts.size()) < p.batch)
    throw std::runtime_error(fmt::format("{}: {} tokens, the layer needs {}", tracePath, tr.experts.size(), p.batch));
  if (tr.topK != p.topK)
    throw std::runtime_error(fmt::format("{}: top-{} routing, the layer says k = {}", tracePath, tr.topK, p.topK));
  tr.experts.resize(size_t(p.batch));
  MoeParams q = p;
  q.trace = "routing.csv";
  StagingDir st(dir);
  {
    std::ofstream g(st.tmp / "graph.yaml");
    g << (p.regions ? buildMoeRegionsGraph(q, p.regions, tr.experts) : buildMoeGraph(q));
    std::ofstream csv(st.tmp / "routing.csv");
    csv << routingTraceCsv(tr);
    if (!g || !csv) throw std::runtime_error("cannot write " + dir);
  }
  if (inputs) {
    const auto in = p.regions ? moeRegionsInputs(q, p.regions, tr.experts, seed) : moeInputs(q, tr.experts, seed);
    for (const auto& [name, m] : in) toNpy(st.tmp / "inputs" / (name + ".npy"), m);
  }
  st.commit();
}

}  // namespace stepgen
