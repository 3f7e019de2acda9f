#pragma once
// The decoder-layer results (`stepgen study decoder-layer`, docs/results/decoder_layer.md):
// every model's layer at scaled dims through the model and the RTL, against the
// double-precision reference, and at true dims through the timing-only model with tokens/s.
#include <cstdint>
#include <string>
#include <vector>

namespace stepgen {

/// Options of `stepgen study decoder-layer`.
struct DecoderStudyOptions {
  std::string archPath = "arch/decoder.yaml";       ///< scaled dims: model and RTL
  std::string trueArchPath = "arch/unbounded.yaml";  ///< true dims: timing-only model
  std::string kvLengthsPath = "examples/attention/data/azure_kv_batches_b16_b64.csv";
  int64_t scaledBatch = 0;    ///< the batch of the KV-length CSV the scaled rows use (16 requests; batch 1 = its first)
  int64_t trueBatch64 = 21;   ///< the first batch of 64 requests in that CSV (batch 1 and 16 rows use scaledBatch)
  std::string workDir = "out/decoder_layer";
  std::string csvPath, mdPath;  ///< files to write ("" = print only)
  bool rtl = true;              ///< run the scaled rows that map in RTL
  std::string buildCache;       ///< kept verilated fabrics ("" = <work>/build_cache)
  double clockGhz = 1.0;        ///< the clock tokens/s is stated at
  uint32_t seed = 1;
};

/// Rows (docs/results/decoder_layer.csv): per model (qwen3-moe, mixtral, llama-dense), at
/// scaled dims for batch 1 and 16 (real KV lengths) the whole layer: verify on archPath
/// (model and RTL, the MoE models' routed on the fabric), the outputs' largest row-relative
/// error against decref::layerReference; Mixtral's also with the routing replayed from its
/// real trace (stage layer_replayed_routing: model and RTL); at true dims for batch 1, 16 and 64 the attention
/// half, the FFN half and the whole layer through the timing-only model on trueArchPath
/// (MoE routing replayed from the model's real trace), with off-chip bytes, the roofline
/// and, for the layer, tokens/s = batch x clock / (layer cycles x layers). Prints the
/// markdown and writes the files. Returns 0, or 2 when a row that ran failed (a deadlock,
/// outputs that differ from the model's, an error above the test's bound 2^-5).
/// Errors: DiagError / std::runtime_error from the stages.
int runDecoderStudy(const DecoderStudyOptions& o);

}  // namespace stepgen
