#include "driver/attention_example.hpp"

#include "driver/inputs.hpp"
#include "driver/staging.hpp"
#include "ir/graph.hpp"
#include "support/files.hpp"

namespace stepgen {

void writeAttentionExample(const AttentionParams& p, const std::string& dir, uint32_t seed) {
  const std::string text = buildDecodeAttentionGraph(p);
  StagingDir st(dir);
  writeFile(st.tmp / "graph.yaml", text);
  auto in = loadInputs(loadGraph((st.tmp / "graph.yaml").string()), "", seed);
  if (in.count("mask")) in["mask"] = attentionMask(p);
  if (in.count("ones")) in["ones"] = attentionOnes(p);
  for (const auto& [name, m] : in) toNpy(st.tmp / "inputs" / (name + ".npy"), m);
  st.commit();
}

void writeGqaExample(const GqaParams& p, const std::string& dir, uint32_t seed, bool fixedOnly) {
  const std::string text = buildGqaDecodeGraph(p);
  StagingDir st(dir);
  writeFile(st.tmp / "graph.yaml", text);
  std::map<std::string, Matrix> in;
  if (!fixedOnly) in = loadInputs(loadGraph((st.tmp / "graph.yaml").string()), "", seed);
  for (auto& [name, m] : gqaFixedInputs(p)) in[name] = std::move(m);
  for (const auto& [name, m] : in) toNpy(st.tmp / "inputs" / (name + ".npy"), m);
  st.commit();
}

}  // namespace stepgen
