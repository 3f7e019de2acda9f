#include "driver/examples.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "driver/inputs.hpp"
#include "driver/staging.hpp"
#include "ir/graph.hpp"
#include "support/files.hpp"
#include "support/routing_trace.hpp"

namespace stepgen {

void writeGraphExample(const std::string& graph, const std::map<std::string, Matrix>& fixed, const std::string& dir,
                       uint32_t seed, bool fixedOnly, const std::map<std::string, std::string>& files) {
  StagingDir st(dir);
  writeFile(st.tmp / "graph.yaml", graph);
  for (const auto& [name, text] : files) writeFile(st.tmp / name, text);
  std::map<std::string, Matrix> in;
  if (!fixedOnly) in = loadInputs(loadGraph((st.tmp / "graph.yaml").string()), "", seed);
  for (const auto& [name, m] : fixed) in[name] = m;
  for (const auto& [name, m] : in) toNpy(st.tmp / "inputs" / (name + ".npy"), m);
  st.commit();
}

void writeAttentionExample(const AttentionParams& p, const std::string& dir, uint32_t seed) {
  writeGraphExample(buildDecodeAttentionGraph(p), attentionFixedInputs(p), dir, seed);
}

void writeGqaExample(const GqaParams& p, const std::string& dir, uint32_t seed, bool fixedOnly) {
  writeGraphExample(buildGqaDecodeGraph(p), gqaFixedInputs(p), dir, seed, fixedOnly);
}

void writeRmsNormExample(const RmsNormParams& p, const std::string& dir, uint32_t seed) {
  writeGraphExample(buildRmsNormGraph(p), rmsNormFixedInputs(p), dir, seed);
}

void writeRopeExample(const RopeParams& p, const std::string& dir, uint32_t seed) {
  writeGraphExample(buildRopeGraph(p), ropeTables(p), dir, seed);
}

void writeKvAppendExample(const KvAppendParams& p, const std::string& dir, uint32_t seed) {
  writeGraphExample(buildKvAppendGraph(p), kvAppendFixedInputs(p), dir, seed);
}

void writeDecoderLayerExample(const DecoderLayerParams& p, const std::string& dir, uint32_t seed, bool fixedOnly,
                              const std::string& tracePath) {
  RoutingTrace tr;
  std::map<std::string, std::string> files;
  if (p.traceRouting) {
    const DecoderDims d = layerDims(p);
    tr = readRoutingTrace(tracePath, int(d.experts));
    const size_t b = p.kvLengths.size();
    if (tr.experts.size() < b || tr.topK != d.topK)
      throw std::runtime_error(fmt::format("{}: {} tokens of top-{} routing; the layer needs {} of top-{}", tracePath,
                                           tr.experts.size(), tr.topK, b, d.topK));
    tr.experts.resize(b);
    files["routing.csv"] = routingTraceCsv(tr);
  }
  writeGraphExample(buildDecoderLayerGraph(p), decoderLayerInputs(p, seed, fixedOnly, tr.experts), dir, seed,
                    /*fixedOnly=*/true, files);
}

}  // namespace stepgen
