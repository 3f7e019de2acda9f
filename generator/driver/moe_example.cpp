#include "driver/moe_example.hpp"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "builders/moe_regions.hpp"
#include "driver/inputs.hpp"
#include "driver/staging.hpp"
#include "support/routing_trace.hpp"

namespace stepgen {

void writeMoeExample(const MoeParams& p, const std::string& tracePath, const std::string& dir, uint32_t seed,
                     bool inputs) {
  RoutingTrace tr = readRoutingTrace(tracePath, int(p.experts));
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
    csv << "token";
    for (int64_t j = 0; j < p.topK; ++j) csv << ",expert_" << j;
    csv << "\n";
    for (size_t t = 0; t < tr.experts.size(); ++t) {
      csv << t;
      for (int e : tr.experts[t]) csv << "," << e;
      csv << "\n";
    }
    if (!g || !csv) throw std::runtime_error("cannot write " + dir);
  }
  if (inputs) {
    const auto in = p.regions ? moeRegionsInputs(q, p.regions, tr.experts, seed) : moeInputs(q, tr.experts, seed);
    for (const auto& [name, m] : in) toNpy(st.tmp / "inputs" / (name + ".npy"), m);
  }
  st.commit();
}

}  // namespace stepgen
