#include "driver/examples.hpp"

#include "driver/inputs.hpp"
#include "driver/staging.hpp"
#include "ir/graph.hpp"
#include "support/files.hpp"

namespace stepgen {

void writeGraphExample(const std::string& graph, const std::map<std::string, Matrix>& fixed, const std::string& dir,
                       uint32_t seed, bool fixedOnly) {
  StagingDir st(dir);
  writeFile(st.tmp / "graph.yaml", graph);
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

void writeDecoderLayerExample(const DecoderLayerParams& p, const std::string& dir, uint32_t seed, bool fixedOnly) {
  writeGraphExample(buildDecoderLayerGraph(p), decoderLayerInputs(p, seed, fixedOnly), dir, seed, /*fixedOnly=*/true);
}

}  // namespace stepgen
