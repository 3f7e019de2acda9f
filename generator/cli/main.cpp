// The stepgen command: argument parsing only; the work is in driver/ (pipeline.cpp) and studies/.
#include <algorithm>
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>

#include "builders/swiglu.hpp"
#include "driver/moe_example.hpp"
#include "builders/attention.hpp"
#include "driver/examples.hpp"
#include "support/kv_lengths.hpp"
#include "studies/tiling.hpp"
#include "studies/tiling_full.hpp"
#include "studies/decoder_study.hpp"
#include "studies/onnx_conformance.hpp"
#include "onnx/onnx_import.hpp"
#include "studies/dynpar_study.hpp"
#include "studies/regions_study.hpp"
#include "studies/random_study.hpp"
#include "builders/random_graph.hpp"
#include "studies/sections_study.hpp"
#include "studies/bench.hpp"
#include "driver/pipeline.hpp"
#include "fpga/synth.hpp"
#include "jobs/point_jobs.hpp"
#include "jobs/runner.hpp"
#include "jobs/slurm.hpp"
#include "studies/sweep.hpp"
#include "support/files.hpp"
#include "version.hpp"

using namespace stepgen;

namespace {

int reportDiag(const DiagError& e) {
  for (const auto& d : e.diags) std::cerr << formatDiagnostic(d);
  return 1;
}

std::vector<uint8_t> readBytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw DiagError("R-403", {p}, "cannot read bitstream file");
  return {std::istreambuf_iterator<char>(in), {}};
}

// The files every study writes: its work folder, the CSV and the markdown table.
void studyFiles(CLI::App* cmd, std::string& workDir, std::string& csv, std::string& md) {
  cmd->add_option("-o,--out", workDir, "work folder");
  cmd->add_option("--csv", csv, "CSV file to write");
  cmd->add_option("--md", md, "markdown table to write");
}

// A study's points as jobs (jobs/point_jobs.hpp, docs/cluster.md): --plan writes them as a job
// list instead of running them, --merge writes the tables from a job list's results.
struct JobFlags {
  std::string plan, merge;
};
void jobFlags(CLI::App* cmd, JobFlags& f) {
  auto* plan = cmd->add_option("--plan", f.plan, "write the study's points as a job list into this folder instead of running "
                                                 "them (then `stepgen jobs run` and `stepgen jobs merge`; docs/cluster.md)");
  cmd->add_option("--merge", f.merge, "write the tables from the results of the job list in this folder (what `stepgen jobs "
                                      "merge` runs)")
      ->excludes(plan);
}

// The study's own arguments (after `stepgen`) without --plan DIR: what the merge runs again.
std::vector<std::string> studyArgs(int argc, char** argv) {
  std::vector<std::string> a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    if (s == "--plan") ++i;
    else if (s.rfind("--plan=", 0) != 0) a.push_back(s);
  }
  return a;
}

std::string selfPath() { return std::filesystem::canonical("/proc/self/exe").string(); }

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stepgen: STeP graphs -> spatial dataflow fabric (Verilog + bitstream), verified in Verilator"};
  app.set_version_flag("--version", std::string("stepgen ") + STEPGEN_VERSION);
  app.require_subcommand(1);

  VerifyOptions vo;
  auto* verifyCmd = app.add_subcommand("verify", "compile, run the model and the RTL (Verilator), compare outputs and cycles");
  verifyCmd->add_option("--arch", vo.archPath, "architecture YAML")->required()->check(CLI::ExistingFile);
  verifyCmd->add_option("--graph", vo.graphPath, "STeP graph YAML")->required()->check(CLI::ExistingFile);
  verifyCmd->add_option("-o,--out", vo.outDir, "output folder (replaced only when complete)")->required();
  verifyCmd->add_option("--inputs", vo.inputsDir, "folder with <tensor>.npy inputs (default: seeded random)");
  verifyCmd->add_option("--seed", vo.seed, "seed of the random inputs");
  verifyCmd->add_option("--sections", vo.minSections,
                        "cut the graph into at least N sections (contexts) even where it fits in one")
      ->check(CLI::Range(1, 64));
  std::string vCarry = "auto";
  verifyCmd->add_option("--carry", vCarry, "streams crossing a section cut: auto (in a memory unit where one is free, "
                                           "else DRAM) or dram")
      ->check(CLI::IsMember({"auto", "dram"}));
  bool vNoBuffering = false;
  verifyCmd->add_flag("--no-buffering", vNoBuffering, "keep the link FIFOs alone on reconvergent paths (a residual, a "
                                                      "diamond): no buffer or cut is added, so such a graph may deadlock "
                                                      "(to study it; the mapping report lists what buffering would add)");
  verifyCmd->add_flag("--trace", vo.trace, "write an FST waveform of the RTL run (out/wave.fst)");
  verifyCmd->add_flag("--model-only", vo.skipRtl, "skip the Verilator run");
  verifyCmd->add_option("--reference", vo.referenceDir,
                        "folder of reference outputs <tensor>.npy and tolerance.txt (stepgen import onnx --data writes "
                        "<out>/expected): the model's outputs must be within that relative error (docs/onnx.md)")
      ->check(CLI::ExistingDirectory);
  verifyCmd->add_flag("--axi", vo.axi,
                      "also run the fabric through its AXI wrapper sg_axi_top (AXI4 masters, AXI4-Lite control; docs/axi.md) "
                      "and compare it with the model and the flat-port run");
  auto* hierOpt = verifyCmd->add_flag_callback(
      "--hierarchical", [&vo] { vo.hierarchical = true; },
      "verilate the compute unit once per parameter set (Verilator --hierarchical): builds of big fabrics several times "
      "faster, runs slower (docs/hardware.md section 6). Default: hierarchical from 16 compute units on, else flat");
  verifyCmd->add_flag_callback("--flat", [&vo] { vo.hierarchical = false; },
                               "verilate the fabric as one model (runs faster, builds slower on big fabrics)")
      ->excludes(hierOpt);
  verifyCmd->add_option("--watchdog", vo.watchdogCycles, "cycles without progress before the RTL run is declared deadlocked (at least twice the longest tile computation the model times)");
  verifyCmd->add_option("--build-cache", vo.buildCache, "folder that keeps verilated fabrics between runs");
  verifyCmd->add_option("--max-cycle-error", vo.maxCycleErrorPercent,
                        "fail when |RTL - model| / RTL cycles exceeds this many percent (default: not checked)");

  std::string cArch, cGraph, cOut;
  int cSections = 1;
  auto* compileCmd = app.add_subcommand("compile", "compile only: Verilog, bitstream (.bin/.cfg), mapping report");
  compileCmd->add_option("--arch", cArch, "architecture YAML")->required()->check(CLI::ExistingFile);
  compileCmd->add_option("--graph", cGraph, "STeP graph YAML")->required()->check(CLI::ExistingFile);
  compileCmd->add_option("-o,--out", cOut, "output folder")->required();
  compileCmd->add_option("--sections", cSections, "cut the graph into at least N sections (contexts) even where it fits in one")
      ->check(CLI::Range(1, 64));
  std::string cCarry = "auto";
  compileCmd->add_option("--carry", cCarry, "streams crossing a section cut: auto (in a memory unit where one is free, "
                                            "else DRAM) or dram")
      ->check(CLI::IsMember({"auto", "dram"}));
  bool cNoBuffering = false;
  compileCmd->add_flag("--no-buffering", cNoBuffering, "keep the link FIFOs alone on reconvergent paths (see verify)");

  SwigluParams sp;
  std::string gOut;
  auto* graphCmd = app.add_subcommand("graph", "write a layer's STeP graph YAML");
  graphCmd->require_subcommand(1);
  auto* swigluCmd = graphCmd->add_subcommand("swiglu", "SwiGLU FFN: out = (silu(x Wg) * (x Wu)) Wd");
  swigluCmd->add_option("--batch", sp.batch, "B");
  swigluCmd->add_option("--hidden", sp.hidden, "D");
  swigluCmd->add_option("--ffn", sp.ffn, "F");
  swigluCmd->add_option("--tile-b", sp.tileB, "batch tile");
  swigluCmd->add_option("--tile-f", sp.tileF, "FFN tile");
  swigluCmd->add_option("-o,--out", gOut, "output file (default: stdout)");
  uint32_t rgSeed = 1;
  auto* randomCmd = graphCmd->add_subcommand("random", "a seeded random STeP graph of the random-graph study (docs/random_graphs.md), "
                                                       "within arch/default.yaml's units");
  randomCmd->add_option("--seed", rgSeed, "the graph's seed");
  auto* rgOut = randomCmd->add_option("-o,--out", gOut, "output file (default: stdout)");
  bool rgPartition = false;
  randomCmd->add_flag("--partition", rgPartition, "the fabric has the partition and merge functions: a Partition step (and an EagerMerge after it) may be drawn "
                                                  "(its routing traces are written beside the graph)")
      ->needs(rgOut);
  bool rgFeedback = false;
  randomCmd->add_flag("--feedback", rgFeedback, "... and select: a Partition may be dealt by a feedback cycle of free signals instead "
                                                "(docs/graph_format.md#feedback-streams)")
      ->needs("--partition");
  bool rgRoute = false;
  randomCmd->add_flag("--route", rgRoute, "... and a memory unit has the route mode: a route cluster (the MoE dispatch) may be drawn")
      ->needs("--partition");
  bool rgCombine = false;
  randomCmd->add_flag("--combine", rgCombine, "... and three memory units have it: each step draws the route cluster first one time in two, "
                                              "and it may go on through an expert bias add and a combine cluster (FlatMap, Flatten, "
                                              "Reassemble) back to token order")
      ->needs("--route");
  bool rgDynamic = false;
  randomCmd->add_flag("--dynamic", rgDynamic,
                      fmt::format("the fabric has the dynamic-tile functions ({}): their steps may be drawn",
                                  fmt::join(kDynamicStepFunctions, ", ")));
  bool rgAttention = false;
  randomCmd->add_flag("--attention",
                      rgAttention,
                      fmt::format("the fabric has the attention functions ({}): they may be drawn",
                                  fmt::join(kAttentionStepFunctions, ", ")));
  int layers = 4;
  auto* mlpCmd = graphCmd->add_subcommand("mlp", "a stack of SwiGLU FFN layers, each layer's output the next one's input");
  mlpCmd->add_option("--layers", layers, "number of layers N")->check(CLI::Range(1, 64));
  mlpCmd->add_option("--batch", sp.batch, "B");
  mlpCmd->add_option("--hidden", sp.hidden, "D");
  mlpCmd->add_option("--ffn", sp.ffn, "F");
  mlpCmd->add_option("--tile-b", sp.tileB, "batch tile");
  mlpCmd->add_option("--tile-f", sp.tileF, "FFN tile");
  mlpCmd->add_option("-o,--out", gOut, "output file (default: stdout)");
  // --example, --seed and -o of a graph command that can also write an example folder.
  auto exampleOptions = [&gOut](CLI::App* cmd, std::string& dir, uint32_t& seed, const std::string& inputs) {
    cmd->add_option("--example", dir, "write a folder instead: <dir>/graph.yaml and <dir>/inputs/ (" + inputs + ")");
    cmd->add_option("--seed", seed, "seed of the written inputs");
    cmd->add_option("-o,--out", gOut, "output file (default: stdout)");
  };
  // A list of per-request lengths, or one batch of a KV-length CSV instead.
  auto lengthOptions = [](CLI::App* cmd, std::vector<int64_t>& list, const std::string& name, const std::string& help,
                          std::string& csv, int64_t& batch) {
    auto* l = cmd->add_option(name, list, help)->delimiter(',');
    cmd->add_option("--kv-lengths", csv, "KV-length CSV (examples/attention/data): one batch's KV lengths instead of " + name)
        ->check(CLI::ExistingFile)
        ->excludes(l);
    cmd->add_option("--batch-index", batch, "with --kv-lengths: the batch (0-based, in file order)");
  };
  AttentionParams ap;
  auto* attnCmd = graphCmd->add_subcommand("attention", "decode attention of one head: out = softmax(q K^T) V for one "
                                                        "query row over a KV cache of L rows");
  attnCmd->add_option("--kv", ap.kv, "L: KV-cache rows");
  attnCmd->add_option("--head-dim", ap.headDim, "D: head dimension");
  attnCmd->add_option("--kv-tile", ap.kvTile, "T: KV rows per tile");
  attnCmd->add_option("--queries", ap.queries, "G: query rows sharing the KV head (GQA)");
  attnCmd->add_flag("--single-pass", ap.singlePass,
                    "one pass with the online-softmax rescale (running max, Accum rescale_add; needs scan_max, "
                    "scan_max_exclusive, accum_rescale, rowscale in the arch's functions)");
  std::string aLengths, aInputs;
  int64_t aBatch = 0, aSlot = 0;
  uint32_t aSeed = 1;
  attnCmd->add_option("--kv-lengths", aLengths, "KV-length CSV (examples/attention/data): take the cache length of one "
                                                "request; --kv becomes it rounded up to whole KV tiles, the rest masked")
      ->check(CLI::ExistingFile);
  attnCmd->add_option("--batch-index", aBatch, "with --kv-lengths: the batch (0-based, in file order)");
  attnCmd->add_option("--slot", aSlot, "with --kv-lengths: the request within the batch");
  exampleOptions(attnCmd, aInputs, aSeed, "q, k, v seeded random, the mask and ones");

  RmsNormParams np;
  std::string nExample;
  uint32_t nSeed = 1;
  auto* normCmd = graphCmd->add_subcommand("rmsnorm", "RMSNorm over the rows of x: out = x * rsqrt(mean(x^2) + eps) * w "
                                                      "(needs mul, add, rowsum and rsqrt in the arch's functions)");
  normCmd->add_option("--rows", np.rows, "B: rows (tokens)");
  normCmd->add_option("--dim", np.dim, "D: the hidden size");
  normCmd->add_option("--eps", np.eps, "added to the mean square (Llama-3, Qwen3: 1e-6; Mixtral: 1e-5)");
  exampleOptions(normCmd, nExample, nSeed, "x and w seeded random, inv_d and eps");

  RopeParams rp;
  std::string pExample, pLengths;
  int64_t pBatch = 0;
  uint32_t pSeed = 1;
  auto* ropeCmd = graphCmd->add_subcommand("rope", "rotary position embedding of one decode step (rotate-half): each "
                                                   "request's heads rotated by the angles of its position");
  lengthOptions(ropeCmd, rp.positions, "--positions", "the requests' positions (tokens before this one)", pLengths, pBatch);
  ropeCmd->add_option("--heads", rp.heads, "rows per request (its q or k heads)");
  ropeCmd->add_option("--head-dim", rp.headDim, "Dh (even)");
  ropeCmd->add_option("--theta", rp.theta, "RoPE base (Qwen3, Mixtral: 1e6; Llama-3: 5e5)");
  exampleOptions(ropeCmd, pExample, pSeed, "x seeded random, cos and sin");

  KvAppendParams kp;
  kp.capacity = 0;
  std::string kExample, kLengthsCsv;
  int64_t kBatch = 0;
  uint32_t kSeed = 1;
  auto* kvCmd = graphCmd->add_subcommand("kv-append", "KV-cache append of one decode step: each request's new row written "
                                                      "at its own position (a state tensor), then the cache read back");
  lengthOptions(kvCmd, kp.lengths, "--lengths", "the requests' cache lengths before the step", kLengthsCsv, kBatch);
  kvCmd->add_option("--head-dim", kp.headDim, "D: words per cached row (a multiple of 16)");
  kvCmd->add_option("--capacity", kp.capacity, "L: cache rows per request (more than every length; 0: the longest + 1)");
  exampleOptions(kvCmd, kExample, kSeed, "k and k_new seeded random, pos");

  GqaParams gp;
  std::string qLengths, qExample, qStrategy = "coarse";
  int64_t qBatch = 0, qRequests = 0, qScale = 1;
  uint32_t qSeed = 1;
  auto* gqaCmd = graphCmd->add_subcommand(
      "gqa-decode", "GQA decode attention of one KV head for a batch of requests with their own KV lengths, split over R "
                    "parallel regions (single-pass attention per region, run loads of each request's KV tiles)");
  lengthOptions(gqaCmd, gp.kvLengths, "--lengths", "the KV lengths themselves (tokens)", qLengths, qBatch);
  gqaCmd->add_option("--requests", qRequests, "keep the batch's first N requests (0: all)")->check(CLI::NonNegativeNumber);
  gqaCmd->add_option("--kv-scale", qScale, "divide every KV length by this (rounding up): a smaller run for RTL")
      ->check(CLI::PositiveNumber);
  gqaCmd->add_option("--regions", gp.regions, "R: parallel regions");
  gqaCmd->add_option("--strategy", qStrategy, "request assignment: coarse (contiguous blocks), interleave (round robin) or "
                                              "dynamic (to the region free first: a feedback cycle)");
  gqaCmd->add_option("--credits", gp.credits, "dynamic: requests a region may hold at once (its initial free tokens)")
      ->check(CLI::PositiveNumber);
  gqaCmd->add_option("--head-dim", gp.headDim, "D: head dimension");
  gqaCmd->add_option("--kv-tile", gp.kvTile, "T: KV rows per tile");
  gqaCmd->add_option("--queries", gp.queries, "G: query heads per KV head");
  gqaCmd->add_flag("--append", gp.append, "append the step's own k and v rows to the caches first (state tensors; the "
                                          "attention then covers one more token per request)");
  exampleOptions(gqaCmd, qExample, qSeed, "q, k, v seeded random; mask, ones, meta rows");

  DecoderLayerParams dl;
  dl.kvLengths.clear();
  std::string dlLengths, dlExample, dlModel = "qwen3-moe", dlDims = "scaled";
  int64_t dlBatch = 0, dlRequests = 0, dlScale = 1;
  uint32_t dlSeed = 1;
  auto* layerCmd = graphCmd->add_subcommand(
      "decoder-layer", "one decode step of a whole decoder layer for a batch of requests: RMSNorm, q/k/v projections, "
                       "QK-norm (Qwen3), RoPE, KV append, GQA attention, output projection + residual, RMSNorm, router + "
                       "top-k MoE (or a dense SwiGLU), residual (docs/graph_format.md#decoder-layer)");
  layerCmd->add_option("--model", dlModel, "qwen3-moe, mixtral or llama-dense")
      ->check(CLI::IsMember({"qwen3-moe", "mixtral", "llama-dense"}));
  layerCmd->add_option("--dims", dlDims, "scaled (RTL-sized, seeded weights) or true (the published dimensions; the "
                                         "example then holds the constant tables only, for model --timing-only)")
      ->check(CLI::IsMember({"scaled", "true"}));
  lengthOptions(layerCmd, dl.kvLengths, "--lengths", "the requests' KV lengths before the step (tokens)", dlLengths, dlBatch);
  layerCmd->add_option("--requests", dlRequests, "keep the batch's first N requests (0: all)")->check(CLI::NonNegativeNumber);
  layerCmd->add_option("--kv-scale", dlScale, "divide every KV length by this (rounding up): a smaller run for RTL")
      ->check(CLI::PositiveNumber);
  layerCmd->add_option("--kv-tile", dl.kvTile, "T: KV rows per attention tile (0: min(Dh, 32))");
  layerCmd->add_option("--k-tile", dl.kTile, "columns of a projection's K tile (0: min(D, 256))");
  layerCmd->add_option("--tile-f", dl.tileF, "FFN / expert F tile (0: min(F, 32) scaled, min(F, 64) true dims)");
  std::string dlTrace;
  layerCmd->add_option("--trace", dlTrace, "replay this routing trace instead of the on-fabric router (--dims true: "
                                           "always, default the model's real trace in examples/moe/data, as the timing-only "
                                           "model computes no logits; scaled: to run the MoE in RTL, the router's weights "
                                           "having no hardware)")
      ->check(CLI::ExistingFile);
  exampleOptions(layerCmd, dlExample, dlSeed, "x, weights, caches seeded; constant tables");

  MoeParams mp;
  std::string mTrace, mOut;
  uint32_t mSeed = 1;
  auto* moeCmd = graphCmd->add_subcommand(
      "moe", "top-k Mixture-of-Experts layer of SwiGLU experts routed by a trace or on the fabric (--router): writes "
             "graph.yaml, routing.csv, inputs/");
  moeCmd->add_option("--trace", mTrace, "routing CSV (token,expert_0..expert_{k-1}); required unless --router")
      ->check(CLI::ExistingFile);
  moeCmd->add_option("--experts", mp.experts, "E");
  moeCmd->add_option("--k", mp.topK, "experts per token");
  moeCmd->add_option("--batch", mp.batch, "B: tokens (the trace's first B)");
  moeCmd->add_option("--hidden", mp.hidden, "D");
  moeCmd->add_option("--ffn", mp.ffn, "F: FFN width of one expert");
  moeCmd->add_option("--tile-b", mp.tileB, "static token tile (0 = dynamic tiling)");
  moeCmd->add_option("--tile-f", mp.tileF, "FFN tile");
  moeCmd->add_option("--seed", mSeed, "seed of the input tensors");
  bool mNoInputs = false, mSynthetic = false;
  moeCmd->add_option("--block", mp.block, "route the batch in blocks of this many tokens (a route unit holds 64), one "
                                          "after the other (0: all at once)");
  moeCmd->add_flag("--synthetic", mSynthetic, "a trace shorter than --batch: draw the batch's routing with the trace's "
                                              "expert frequencies (seeded by --seed)");
  moeCmd->add_flag("--no-inputs", mNoInputs,
                   "write graph.yaml and routing.csv only (for `model --timing-only` at real sizes, whose tensors would "
                   "not fit in memory)");
  moeCmd->add_flag("--dispatch-only", mp.dispatchOnly,
                   "end at EagerMerge and store the expert-grouped token tiles (the route cluster alone)");
  moeCmd->add_flag("--router", mp.router, "route on the fabric: gate logits x Wr^T, Map(topk) and Map(topk_logits) with a softmax for the weights "
                                          "(docs/step_semantics.md#topk) instead of a trace");
  moeCmd->add_flag("--residual", mp.residual,
                   "y = x + MoE(x): the x rows are broadcast to the router and the final add (needs link FIFOs of B*D "
                   "words on the add's side, else it deadlocks)");
  moeCmd->add_option("--regions", mp.regions,
                     "R >= 1: only the experts, on R parallel regions of E/R experts each (one pipeline per region, "
                     "time-multiplexed over its experts; outputs ym_r<r>)");
  moeCmd->add_option("-o,--out", mOut, "output folder")->required();

  std::string rArch, rGraph, rInputs, rOut;
  uint32_t rSeed = 1;
  bool rTiming = false;
  auto* modelCmd = app.add_subcommand("model", "run the approximate model only (functional outputs, traffic and memory "
                                               "figures, no mapping); runs any graph, also one that does not map onto the "
                                               "fabric. --timing-only: cycles without values (maps the graph)");
  modelCmd->add_flag("--timing-only", rTiming,
                     "map the graph and estimate cycles, off-chip and on-chip bytes without computing any tensor value "
                     "(no inputs are read; an arch with `grid: unbounded` gets one unit per operator)");
  modelCmd->add_option("--arch", rArch, "architecture YAML")->required()->check(CLI::ExistingFile);
  modelCmd->add_option("--graph", rGraph, "STeP graph YAML")->required()->check(CLI::ExistingFile);
  modelCmd->add_option("--inputs", rInputs, "folder with <tensor>.npy inputs (default: seeded random); with --timing-only "
                                          "only the meta rows of run loads are read from it (the GQA graphs need them)");
  modelCmd->add_option("--seed", rSeed, "seed of the random inputs");
  modelCmd->add_option("-o,--out", rOut, "folder for the output tensors (.npy); required unless --timing-only");

  std::string oModel, oOut, oData, oTrace, oArch, oSchedule;
  auto* importCmd = app.add_subcommand("import", "read a model from a standard format into a STeP graph (docs/onnx.md)");
  importCmd->require_subcommand(1);
  auto* onnxCmd = importCmd->add_subcommand(
      "onnx", "an ONNX model (opsets 1-17, float32, static shapes) to <out>/graph.yaml and <out>/inputs/ (its constants, "
              "and with --data its inputs); one tile per ONNX value (or row tiles: --arch, --schedule), layout operators "
              "folded into the input tensors");
  onnxCmd->add_option("model", oModel, "the .onnx file")->required()->check(CLI::ExistingFile);
  onnxCmd->add_option("-o,--out", oOut, "output folder (replaced; not left behind on an error)")->required();
  onnxCmd->add_option("--data", oData, "a folder with the inputs and expected outputs: an ONNX test_data_set (input_<k>.pb, "
                                       "output_<k>.pb) or <value name>.npy files (examples/pytorch/*/data): the inputs "
                                       "go to inputs/, the outputs to expected/ with tolerance.txt (verify --reference)");
  onnxCmd->add_option("--routing-trace", oTrace, "a routing CSV (examples/moe/data) that every Mixture-of-Experts block "
                                                 "replays instead of routing on the fabric: for `model --timing-only`, "
                                                 "which computes no logits (docs/onnx.md#moe)")
      ->check(CLI::ExistingFile);
  auto* oArchOpt = onnxCmd->add_option("--arch", oArch, "choose row tiles so that every matmul fits this arch's compute unit "
                                                        "(docs/onnx.md#tiling; default: one tile per value)")
                       ->check(CLI::ExistingFile);
  onnxCmd->add_option("--schedule", oSchedule, "a YAML schedule: tile_rows: N (rows per tile where the graph's operators "
                                               "work row by row; docs/onnx.md#tiling)")
      ->check(CLI::ExistingFile)
      ->excludes(oArchOpt);
  TilingStudyOptions to;
  auto* studyCmd = app.add_subcommand("study", "studies of the dynamic STeP optimizations");
  studyCmd->require_subcommand(1);
  DecoderStudyOptions dso;
  auto* decoderStudyCmd = studyCmd->add_subcommand(
      "decoder-layer", "each model's decoder layer (graph decoder-layer): scaled dims in the model and RTL against a double "
                       "reference, true dims in the timing-only model with tokens/s (docs/results/decoder_layer.md)");
  decoderStudyCmd->add_option("--arch", dso.archPath, "fabric of the scaled rows (model and RTL)")->check(CLI::ExistingFile);
  decoderStudyCmd->add_option("--true-arch", dso.trueArchPath, "fabric of the true-dims rows (timing-only)")->check(CLI::ExistingFile);
  decoderStudyCmd->add_option("--kv-lengths", dso.kvLengthsPath, "KV-length CSV (examples/attention/data)")->check(CLI::ExistingFile);
  decoderStudyCmd->add_option("--clock-ghz", dso.clockGhz, "clock that tokens/s is stated at")->check(CLI::PositiveNumber);
  decoderStudyCmd->add_flag("!--no-rtl", dso.rtl, "scaled rows in the model only");
  decoderStudyCmd->add_option("--build-cache", dso.buildCache, "folder that keeps verilated fabrics between runs");
  decoderStudyCmd->add_option("-o,--out", dso.workDir, "work folder");
  decoderStudyCmd->add_option("--csv", dso.csvPath, "write the CSV here");
  decoderStudyCmd->add_option("--md", dso.mdPath, "write the markdown table here");
  OnnxConformanceOptions oco;
  oco.archPath = std::string(STEPGEN_ROOT) + "/arch/onnx.yaml";
  auto* onnxStudyCmd = studyCmd->add_subcommand(
      "onnx-conformance", "ONNX's own node tests (libonnx-testdata): import, model, compare with the expected outputs "
                          "(docs/results/onnx_conformance.md)");
  oco.rtlArchPath = std::string(STEPGEN_ROOT) + "/arch/onnx_small.yaml";
  onnxStudyCmd->add_option("--data", oco.dataDirs, "folders of ONNX test folders (default: libonnx-testdata's node, "
                                                    "pytorch-converted, pytorch-operator)")->check(CLI::ExistingDirectory);
  onnxStudyCmd->add_option("--rtl-arch", oco.rtlArchPath, "bounded fabric the tests that map onto it run on in Verilator "
                                                          "(\"\" for none)");
  onnxStudyCmd->add_option("--build-cache", oco.buildCache, "folder that keeps the verilated fabric between runs");
  onnxStudyCmd->add_option("--arch", oco.archPath, "fabric the model runs on")->check(CLI::ExistingFile);
  onnxStudyCmd->add_option("--only", oco.only, "run only the tests whose name contains this");
  studyFiles(onnxStudyCmd, oco.workDir, oco.csvPath, oco.mdPath);
  TilingFullOptions tfo;
  auto* tilingFullCmd = studyCmd->add_subcommand(
      "tiling-full", "dynamic tiling at the models' true dimensions (Mixtral-8x7B, Qwen3-30B-A3B; batch 64 real traces, "
                     "1024 synthetic), timing-only model on an unbounded fabric (docs/results/moe_tiling_full.md)");
  tilingFullCmd->add_option("--arch", tfo.archPath, "architecture YAML (default arch/unbounded.yaml)")->check(CLI::ExistingFile);
  tilingFullCmd->add_option("--data", tfo.dataDir, "folder with the routing CSVs");
  studyFiles(tilingFullCmd, tfo.workDir, tfo.csvPath, tfo.mdPath);
  JobFlags jf;
  jobFlags(tilingFullCmd, jf);
  tilingFullCmd->add_option("--batches", tfo.batches, "batches (tokens); above 64 the trace is synthetic");
  tilingFullCmd->add_option("--tiles", tfo.tiles, "static token tiles at batch 64, scaled by batch/64 above; 0 = dynamic");
  tilingFullCmd->add_option("--seed", tfo.seed, "seed of the synthetic traces");
  auto* tilingCmd = studyCmd->add_subcommand("tiling", "dynamic tiling: static token tiles {8,16,32,64} vs dynamic on the "
                                                       "Mixtral and Qwen3 traces (docs/step_semantics.md#dynamic-tiling)");
  tilingCmd->add_option("--arch", to.archPath, "architecture YAML")->check(CLI::ExistingFile);
  tilingCmd->add_option("--data", to.dataDir, "folder with the routing CSVs");
  studyFiles(tilingCmd, to.workDir, to.csvPath, to.mdPath);
  jobFlags(tilingCmd, jf);
  tilingCmd->add_flag("--rtl", to.rtl, "also verify every point (the whole layer) in RTL on --arch (a fabric like "
                                       "arch/moe.yaml); adds cycles and the RTL memory peak");
  SectionsStudyOptions sso;
  auto* sectionsCmd = studyCmd->add_subcommand(
      "sections", "contexts: a stack of N SwiGLU layers (N = 2, 4, 8) in sections on the arch with 1, 2, 4, 8 contexts");
  sectionsCmd->add_option("--arch", sso.archPath, "architecture YAML (its contexts are varied)")->check(CLI::ExistingFile);
  studyFiles(sectionsCmd, sso.workDir, sso.csvPath, sso.mdPath);
  jobFlags(sectionsCmd, jf);
  sectionsCmd->add_option("--svg", sso.svgPath, "SVG plot to write");
  sectionsCmd->add_option("--layers", sso.layers, "stack depths");
  sectionsCmd->add_option("--contexts", sso.contexts, "context counts");
  sectionsCmd->add_option("--carry", sso.carries, "carry policies (auto, dram)")
      ->check(CLI::IsMember({"auto", "dram"}));
  sectionsCmd->add_flag("--rtl", sso.rtl, "also verify every point in Verilator");
  RandomStudyOptions rno;
  auto* randomStudyCmd = studyCmd->add_subcommand(
      "random", "random STeP graphs on random fabrics through the model and the RTL at link FIFO depths 1, 2 and 8: "
                "bit-exact outputs, equal off-chip bytes, the same deadlock verdict, outputs that do not depend on the FIFO "
                "depth; the cycle error");
  randomStudyCmd->add_option("--arch", rno.archPath, "architecture YAML (its unit counts bound each graph)")->check(CLI::ExistingFile);
  randomStudyCmd->add_option("--first", rno.first, "first seed");
  randomStudyCmd->add_option("--seeds", rno.seeds, "number of seeds")->check(CLI::PositiveNumber);
  randomStudyCmd->add_option("--fifo-depths", rno.fifoDepths, "link FIFO depths each graph runs at");
  randomStudyCmd->add_option("--random-archs", rno.randomArchs, "random fabrics in the arch pool beside --arch (seed mod pool size picks a seed's fabric)")
      ->check(CLI::Range(0, 64));
  randomStudyCmd->add_option("--arch-seed", rno.archSeed, "seed of the first random fabric");
  randomStudyCmd->add_option("--max-cycle-error", rno.maxCycleErrorPercent, "report points whose |cycle error| exceeds this (%)");
  randomStudyCmd->add_flag("--model-only", rno.skipRtl, "skip the RTL");
  randomStudyCmd->add_flag("--reduce", rno.reduce, "shrink each failing seed's graph and write it with its arch files");
  studyFiles(randomStudyCmd, rno.workDir, rno.csvPath, rno.mdPath);
  jobFlags(randomStudyCmd, jf);
  RegionsStudyOptions rso;
  DynparStudyOptions dpo;
  auto* dynparCmd = studyCmd->add_subcommand(
      "dynpar", "dynamic parallelization: GQA decode of the Azure KV-length batches on R regions, each assignment "
                "strategy, model (and RTL for small batches)");
  dynparCmd->add_option("--arch", dpo.archPath, "architecture YAML")->check(CLI::ExistingFile);
  dynparCmd->add_option("--dynamic-arch", dpo.dynamicArchPath, "architecture of the dynamic strategies (model and RTL; an unbounded arch: model only)")
      ->check(CLI::ExistingFile);
  dynparCmd->add_option("--rtl-from", dpo.rtlFrom, "an earlier study CSV whose RTL columns are reused for its static (batch, "
                                                   "strategy) points instead of running Verilator")
      ->check(CLI::ExistingFile);
  dynparCmd->add_option("--rtl-strategies", dpo.rtlStrategies, "the strategies that also run in Verilator (default: all)");
  dynparCmd->add_option("--kv-lengths", dpo.lengthsPath, "KV-length CSV")->check(CLI::ExistingFile);
  dynparCmd->add_option("--batches", dpo.batches, "batch indices (file order; default: all)");
  dynparCmd->add_option("--strategies", dpo.strategies, "coarse, interleave, dynamic (1 credit per region), dynamic:<c>");
  dynparCmd->add_option("--regions", dpo.regions, "R");
  dynparCmd->add_option("--kv-scale", dpo.kvScale, "divide every KV length by this")->check(CLI::PositiveNumber);
  dynparCmd->add_option("--rtl-max-batch", dpo.rtlMaxBatch, "also run Verilator for batches of at most this many requests");
  dynparCmd->add_option("--rtl-batches", dpo.rtlBatches, "of those, only these batch indices (default: all)");
  auto* dynparPaper = dynparCmd->add_flag("--paper", dpo.paper, "the STeP paper's setting: head dim 128 through the timing-only "
                                                                "model on --arch / --dynamic-arch as given (use "
                                                                "arch/unbounded.yaml for both)");
  dynparCmd->add_option("--compare", dpo.compareWith, "with --paper: this fabric's study CSV, its speed-ups beside the paper "
                                                      "setting's in --md")
      ->needs(dynparPaper)
      ->check(CLI::ExistingFile);
  studyFiles(dynparCmd, dpo.workDir, dpo.csvPath, dpo.mdPath);
  jobFlags(dynparCmd, jf);
  auto* regionsCmd = studyCmd->add_subcommand(
      "regions", "configuration time-multiplexing: the Qwen3 MoE experts on R = 128 .. 4 regions, each serving 128/R "
                 "experts one after another (static token tile 16 and dynamic tiling)");
  regionsCmd->add_option("--arch", rso.archPath, "architecture YAML (units, links, DRAM; the grid is replaced)")
      ->check(CLI::ExistingFile);
  regionsCmd->add_option("--data", rso.dataDir, "folder with the routing CSVs");
  studyFiles(regionsCmd, rso.workDir, rso.csvPath, rso.mdPath);
  jobFlags(regionsCmd, jf);
  regionsCmd->add_option("--svg", rso.svgPath, "SVG plot to write");
  regionsCmd->add_option("--regions", rso.regions, "region counts R (each must divide 128)");
  regionsCmd->add_option("--rtl", rso.rtlRegions, "the R also run in Verilator (e.g. --rtl 4 8)");
  auto* regionsPaper = regionsCmd->add_flag("--paper", rso.paper, "the STeP paper's setting: Qwen3's true dims through the "
                                                                   "timing-only model on --arch as given (use arch/unbounded.yaml)");
  regionsCmd->add_option("--compare", rso.compareWith, "with --paper: this fabric's study CSV, shown side by side in --md")
      ->needs(regionsPaper)
      ->check(CLI::ExistingFile);
  regionsCmd->add_option("--rtl-from", rso.rtlFrom, "an earlier study CSV whose RTL columns are reused for its rows "
                                                    "(the model is re-run)")
      ->check(CLI::ExistingFile);

  SynthOptions syo;
  std::string syCsv;
  auto* synthCmd = app.add_subcommand(
      "synth", "FPGA resources of a fabric: Yosys synthesizes each unit kind once and the top with its units as black "
               "boxes (LUT, FF, carry, DSP, BRAM, LUT-RAM, logic levels, Yosys time)");
  synthCmd->add_option("--arch", syo.archPath, "architecture YAML")->required()->check(CLI::ExistingFile);
  synthCmd->add_option("--target", syo.target, "xc7 | xcup (synth_xilinx) | ice40 (synth_ice40 -dsp)")
      ->check(CLI::IsMember({"xc7", "xcup", "ice40"}));
  synthCmd->add_option("--part", syo.part,
                       "part whose capacity the fabric must fit (xc7: xc7a100t, xc7a200t; xcup: xcvu9p; ice40: up5k, hx8k)");
  synthCmd->add_option("-o,--out", syo.outDir, "output folder (rtl/, per-job Yosys logs, synth.json, synth.txt)");
  synthCmd->add_option("--timeout", syo.timeoutSeconds, "seconds per Yosys job");
  int64_t syMemGb = 16;
  synthCmd->add_option("--mem-limit-gb", syMemGb, "virtual memory per Yosys or nextpnr job, GiB (default 16)")
      ->check(CLI::Range(1, 1024));
  synthCmd->add_option("--csv", syCsv, "also write the rows as CSV (docs/results/fpga.csv columns)");
  synthCmd->add_option("--only", syo.only, "synthesize only these rows (ag, cu, mu, top, axi); the fabric row is then partial")
      ->delimiter(',');
  synthCmd->add_option("--set", syo.sets,
                       "override a unit parameter, KIND.NAME=VALUE (e.g. cu.LANES=4), to synthesize units out of context "
                       "at parameters the arch cannot express; the fabric row is then not summed")
      ->delimiter(',');
  synthCmd->add_option("-j,--jobs", syo.jobs, "Yosys jobs at once (each within --timeout and --mem-limit-gb)")
      ->check(CLI::Range(1, 64));
  synthCmd->add_option("--cache", syo.cacheDir,
                       "a folder of finished Yosys jobs, shared by runs (and processes at once): an identical job "
                       "(same Yosys, arguments, flow scripts and preprocessed RTL) takes its result from it; jobs "
                       "that finish are added (so that runs made apart, e.g. --only cu first, sum to one fabric)");
  synthCmd->add_flag("--cu-parts", syo.cuParts,
                     "also synthesize the compute unit's parts (cu.mem, cu.addr, cu.mac, cu.word, cu.rowred) out of "
                     "context, a row each beside the unit's (not in the fabric sum)");
  synthCmd->add_flag("--pnr", syo.pnr,
                     "ice40: also place and route each unit that fits the part with nextpnr-ice40 (out of context, "
                     "ports serialized) and report its Fmax");

  std::string dArch, dBin;
  auto* decodeCmd = app.add_subcommand("decode", "decode a bitstream into its readable .cfg text");
  decodeCmd->add_option("--arch", dArch, "architecture YAML")->required()->check(CLI::ExistingFile);
  decodeCmd->add_option("bitstream", dBin, "fabric.bin")->required();

  SweepOptions so;
  auto* sweepCmd = app.add_subcommand("sweep", "the paper's SwiGLU validation sweep (15 tile points), model and RTL");
  sweepCmd->add_option("--arch", so.archPath, "architecture YAML")->check(CLI::ExistingFile);
  sweepCmd->add_option("-o,--out", so.outDir, "work folder");
  sweepCmd->add_option("--csv", so.csvPath, "CSV file to write");
  sweepCmd->add_flag("--model-only", so.modelOnly, "skip the RTL");
  sweepCmd->add_option("--points", so.maxPoints, "run only the first N points");
  jobFlags(sweepCmd, jf);

  auto* jobsCmd = app.add_subcommand("jobs", "run a study's job list (written by `stepgen study ... --plan DIR`): run, "
                                             "status, merge (docs/cluster.md)");
  jobsCmd->require_subcommand(1);
  std::string jDir, jBackend = "local";
  int jParallel = 2, jChunk = 0;
  std::vector<int> jIds;
  bool jResume = false;
  double jTimeout = 0;
  auto* jobsRun = jobsCmd->add_subcommand("run", "run the jobs of a job list");
  jobsRun->add_option("dir", jDir, "job-list folder")->required()->check(CLI::ExistingDirectory);
  SlurmOptions jSlurm;
  jobsRun->add_option("--backend", jBackend, "where the jobs run: local (this machine, xargs -P) or slurm (sbatch job "
                                             "arrays; docs/cluster.md)")
      ->check(CLI::IsMember({"local", "slurm"}));
  jobsRun->add_option("--partition", jSlurm.partition, "slurm: partition");
  jobsRun->add_option("--time", jSlurm.time, "slurm: time limit per job (Slurm's format, e.g. 1:00:00)");
  jobsRun->add_option("--mem", jSlurm.mem, "slurm: memory per job (e.g. 8G)");
  jobsRun->add_option("--sbatch-opt", jSlurm.extra, "slurm: another sbatch option, as given (repeatable)")->allow_extra_args(false);
  bool jNoWait = false;
  jobsRun->add_flag("--no-wait", jNoWait, "slurm: print the job ids and return (then `stepgen jobs status`)");
  jobsRun->add_option("-j,--jobs", jParallel, "jobs at a time (local backend)")->check(CLI::Range(1, 1024));
  jobsRun->add_option("--chunk", jChunk, "points per `jobs exec` process (its start-up costs as much as a small "
                                         "model-only point); 0: local, a quarter of the points per parallel job slot; "
                                         "slurm, 1")
      ->check(CLI::NonNegativeNumber);
  jobsRun->add_flag("--resume", jResume, "run only the jobs without a result (failed, killed, never run)");
  jobsRun->add_option("--timeout", jTimeout, "kill a job after this many seconds (0: never)")->check(CLI::NonNegativeNumber);
  auto* jobsStatusCmd = jobsCmd->add_subcommand("status", "jobs with a result, failed or killed (with their logs), not run");
  jobsStatusCmd->add_option("dir", jDir, "job-list folder")->required()->check(CLI::ExistingDirectory);
  auto* jobsMerge = jobsCmd->add_subcommand("merge", "write the study's tables from the jobs' results (exit 4 naming the "
                                                     "jobs without one)");
  jobsMerge->add_option("dir", jDir, "job-list folder")->required()->check(CLI::ExistingDirectory);
  auto* jobsExec = jobsCmd->add_subcommand("exec", "run jobs by id, one after another (what a backend calls; commands.txt "
                                                   "lists them)");
  jobsExec->add_option("dir", jDir, "job-list folder")->required()->check(CLI::ExistingDirectory);
  jobsExec->add_option("ids", jIds, "job ids, run one after another")->required();
  jobsExec->add_option("--timeout", jTimeout, "kill the job after this many seconds (0: never)")->check(CLI::NonNegativeNumber);

  BenchOptions bo;
  auto* benchCmd = app.add_subcommand("bench", "generator, model and RTL speed on the shipped fabrics");
  benchCmd->add_option("-o,--out", bo.outDir, "work folder");
  benchCmd->add_option("--report", bo.reportPath, "markdown file to write the tables to (default: none, they are printed; scripts/results.sh bench writes docs/results/bench.md)");
  benchCmd->add_flag("--quick", bo.quick, "only the arch/default.yaml row");
  benchCmd->add_option("--only", bo.only, "only one table (its verdicts; the report holds just that table)")
      ->check(CLI::IsMember({"swiglu", "dynamic", "large", "jobs"}));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << fmt::format("stepgen: error[C-501]: {}\nRun with --help for more information.\n", e.what());
    return 2;
  }
  try {
    if (*verifyCmd) {
      vo.onChipCarry = vCarry == "auto";
      vo.buffering = !vNoBuffering;
      VerifyReport r = verify(vo);
      std::cout << verdictText(r) << "outputs in " << vo.outDir << "\n";
      return passed(r) ? 0 : 2;
    }
    if (*compileCmd) {
      CompileResult c = compileGraph(cArch, cGraph, cSections, cCarry == "auto", !cNoBuffering);
      writeCompileOutputs(c, cOut);
      std::cout << fmt::format("compiled '{}' onto '{}': {} section(s), {} units, wire length {}, {} bitstream words, "
                               "map + bitstream + Verilog {:.3f} s (placement {:.3f} s, section planning {:.3f} s) -> {}\n",
                               c.graph.name, c.arch.name, c.mapping.sections, c.mapping.unitsUsed, c.mapping.wireLength(),
                               c.bitstream.size(), c.mapSeconds, c.mapping.placeSeconds, c.sectionSeconds, cOut);
      return 0;
    }
    if (*attnCmd && !aLengths.empty()) {
      const KvBatch b = readKvBatch(aLengths, aBatch);
      if (aSlot < 0 || aSlot >= int64_t(b.lengths.size()))
        throw DiagError("G-120", {aLengths}, fmt::format("--slot {} is outside 0 .. {} of batch '{}'", aSlot, b.lengths.size() - 1, b.id));
      ap.valid = b.lengths[size_t(aSlot)];
      if (ap.valid < 1) throw DiagError("G-120", {aLengths}, fmt::format("request {} of batch '{}' has no KV tokens", aSlot, b.id));
      ap.kv = (ap.valid + ap.kvTile - 1) / std::max<int64_t>(1, ap.kvTile) * ap.kvTile;
    }
    if (*attnCmd && !aInputs.empty()) {
      writeAttentionExample(ap, aInputs, aSeed);
      std::cout << fmt::format("wrote {0}/graph.yaml, {0}/inputs/ (L {1}, {2} valid)\n", aInputs, ap.kv, ap.valid ? ap.valid : ap.kv);
      return 0;
    }
    if (*ropeCmd && !pLengths.empty()) rp.positions = readKvBatch(pLengths, pBatch).lengths;
    if (*ropeCmd && !pExample.empty()) {
      writeRopeExample(rp, pExample, pSeed);
      std::cout << fmt::format("wrote {0}/graph.yaml, {0}/inputs/ ({1} requests x {2} heads, Dh {3})\n", pExample,
                               rp.positions.size(), rp.heads, rp.headDim);
      return 0;
    }
    if (*kvCmd) {
      if (!kLengthsCsv.empty()) kp.lengths = readKvBatch(kLengthsCsv, kBatch).lengths;
      if (kp.capacity == 0 && !kp.lengths.empty()) kp.capacity = *std::max_element(kp.lengths.begin(), kp.lengths.end()) + 1;
    }
    if (*kvCmd && !kExample.empty()) {
      writeKvAppendExample(kp, kExample, kSeed);
      std::cout << fmt::format("wrote {0}/graph.yaml, {0}/inputs/ ({1} requests, L {2}, D {3})\n", kExample, kp.lengths.size(),
                               kp.capacity, kp.headDim);
      return 0;
    }
    if (*normCmd && !nExample.empty()) {
      writeRmsNormExample(np, nExample, nSeed);
      std::cout << fmt::format("wrote {0}/graph.yaml, {0}/inputs/ (B {1}, D {2})\n", nExample, np.rows, np.dim);
      return 0;
    }
    if (*gqaCmd) {
      gp.kvLengths = requestKvLengths(gp.kvLengths, qLengths, qBatch, qRequests, qScale, "gqa-decode");
      gp.strategy = parseGqaStrategy(qStrategy);
      if (!qExample.empty()) {
        writeGqaExample(gp, qExample, qSeed);
        std::cout << fmt::format("wrote {0}/graph.yaml, {0}/inputs/ ({1} requests, {2} regions, {3})\n", qExample,
                                 gp.kvLengths.size(), gp.regions, qStrategy);
        return 0;
      }
    }
    if (*layerCmd) {
      dl.kvLengths = requestKvLengths(dl.kvLengths, dlLengths, dlBatch, dlRequests, dlScale, "decoder-layer");
      dl.model = parseDecoderModel(dlModel);
      dl.trueDims = dlDims == "true";
      dl.traceRouting = layerDims(dl).experts > 0 && (dl.trueDims || !dlTrace.empty());
      if (!dlTrace.empty() && !dl.traceRouting) throw DiagError("C-501", {}, "graph decoder-layer: --trace needs a MoE model");
      if (dl.traceRouting && dlTrace.empty()) dlTrace = defaultRoutingTrace(dl.model);
      if (!dlExample.empty()) {
        writeDecoderLayerExample(dl, dlExample, dlSeed, dl.trueDims, dlTrace);
        std::cout << fmt::format("wrote {0}/graph.yaml, {0}/inputs/ ({1}, {2} dims, {3} requests{4})\n", dlExample, dlModel,
                                 dlDims, dl.kvLengths.size(), dl.trueDims ? "; constant tables only" : "");
        return 0;
      }
    }
    if (*swigluCmd || *mlpCmd || *attnCmd || *gqaCmd || *randomCmd || *normCmd || *ropeCmd || *kvCmd || *layerCmd) {
      RandomGraphLimits rgLimits;
      rgLimits.partition = rgLimits.merge = rgPartition;
      rgLimits.feedback = rgFeedback;
      rgLimits.route = rgRoute;
      rgLimits.combine = rgCombine;
      rgLimits.dynamic = rgDynamic;
      rgLimits.attention = rgAttention;
      const RandomGraph rg = *randomCmd ? buildRandomGraph(rgSeed, rgLimits) : RandomGraph{};
      std::error_code ec;  // a folder that cannot be made shows as R-404 when the graph is written
      if (!gOut.empty() && std::filesystem::path(gOut).has_parent_path())
        std::filesystem::create_directories(std::filesystem::path(gOut).parent_path(), ec);
      for (const auto& [name, body] : rg.files) writeFile(std::filesystem::path(gOut).parent_path() / name, body);
      std::string text = *swigluCmd ? buildSwigluGraph(sp)
                         : *randomCmd ? rg.yaml
                         : *mlpCmd  ? buildSwigluStack(sp, layers)
                         : *gqaCmd  ? buildGqaDecodeGraph(gp)
                         : *normCmd ? buildRmsNormGraph(np)
                         : *ropeCmd ? buildRopeGraph(rp)
                         : *kvCmd   ? buildKvAppendGraph(kp)
                         : *layerCmd ? buildDecoderLayerGraph(dl)
                                    : buildDecodeAttentionGraph(ap);
      if (gOut.empty()) {
        std::cout << text;
      } else {
        std::ofstream out(gOut);
        out << text;
        if (!out) throw DiagError("R-404", {gOut}, "cannot write the graph file");
      }
      return 0;
    }
    if (*moeCmd) {
      if (mTrace.empty() && !mp.router) throw DiagError("C-501", {}, "graph moe: --trace is required (or --router)");
      writeMoeExample(mp, mTrace, mOut, mSeed, !mNoInputs, mSynthetic);
      std::cout << fmt::format("wrote {0}/graph.yaml{1}{2}\n", mOut, mp.router ? "" : fmt::format(", {}/routing.csv", mOut),
                               mNoInputs ? "" : fmt::format(", {}/inputs/", mOut));
      return 0;
    }
    if (*onnxCmd) {
      std::cout << importOnnx(oModel, oOut, oData, oTrace, oArch, oSchedule) << "\n";
      return 0;
    }
    if (*modelCmd && rTiming) {
      CompileResult c;
      ModelResult r = runTimingOnly(rArch, rGraph, &c, rInputs);
      std::cout << timingOnlyText(c, r);
      return r.timing.deadlock ? 1 : 0;
    }
    if (*modelCmd) {
      if (rOut.empty()) throw CLI::RequiredError("--out");
      ModelResult r = runModelOnly(rArch, rGraph, rInputs, rSeed);
      std::filesystem::create_directories(rOut);
      for (const auto& [name, m] : r.outputs) toNpy(std::filesystem::path(rOut) / (name + ".npy"), m);
      std::cout << fmt::format("model: off-chip {} B, on-chip {} B (cost-model formula), {} FLOPs, {:.3f} s -> {}\n",
                               r.offchipBytes, r.onchipBytes, r.flops, r.wallSeconds, rOut);
      return 0;
    }
    if (*jobsRun && jBackend == "slurm") {
      jSlurm.wait = !jNoWait;
      return runJobsSlurm(jDir, jSlurm, jResume, jTimeout, std::max(1, jChunk), selfPath());
    }
    if (*jobsRun) return runJobsLocal(jDir, jParallel, jResume, jTimeout, jChunk, selfPath());
    if (*jobsStatusCmd) return jobsStatus(jDir);
    if (*jobsMerge) mergeJobs(jDir, selfPath());
    if (*jobsExec) return execJobs(jDir, jIds, jTimeout);
    // A study point runs here, becomes a job (--plan: the study's output is not written), or
    // comes from a job's result (--merge).
    auto study = [&](const std::function<int()>& run) {
      std::streambuf* out = std::cout.rdbuf();
      if (!jf.plan.empty()) {
        setPointMode(PointMode::Plan, jf.plan, studyArgs(argc, argv));
        for (std::string* f : {&to.csvPath, &to.mdPath, &sso.csvPath, &sso.mdPath, &sso.svgPath, &rno.csvPath, &rno.mdPath,
                               &dpo.csvPath, &dpo.mdPath, &rso.csvPath, &rso.mdPath, &rso.svgPath, &so.csvPath, &tfo.csvPath, &tfo.mdPath})
          f->clear();
        std::cout.rdbuf(nullptr);
      } else if (!jf.merge.empty()) {
        setPointMode(PointMode::Merge, jf.merge, {});
      }
      const int rc = run();
      std::cout.rdbuf(out);
      std::cout.clear();
      return finishPointMode(rc, selfPath());
    };
    if (*tilingCmd) return study([&] { return runTilingStudy(to); });
    if (*tilingFullCmd) return study([&] { return runTilingFullStudy(tfo); });
    if (*decoderStudyCmd) return runDecoderStudy(dso);
    if (*onnxStudyCmd) return runOnnxConformance(oco);
    if (*sectionsCmd) return study([&] { return runSectionsStudy(sso); });
    if (*regionsCmd) return study([&] { return runRegionsStudy(rso); });
    if (*randomStudyCmd) return study([&] { return runRandomStudy(rno); });
    if (*dynparCmd) return study([&] { return runDynparStudy(dpo); });
    if (*decodeCmd) {
      ArchModel a = loadArch(dArch);
      ConfigLayout l = buildConfigLayout(a);
      std::vector<uint32_t> w;
      try {
        w = bytesToWords(readBytes(dBin));
        std::cout << configText(decodeBitstream(w, l), l, a);
      } catch (const std::runtime_error& e) {
        if (dynamic_cast<const DiagError*>(&e)) throw;
        throw DiagError("R-405", {dBin}, e.what());
      }
      return 0;
    }
    if (*sweepCmd) return study([&] { return runSweep(so); });
    if (*synthCmd) {
      syo.memLimitKb = syMemGb * 1024 * 1024;
      const SynthReport r = runSynth(syo);
      const std::string table = synthTable(r);
      writeFile(std::filesystem::path(syo.outDir) / "synth.txt", table);
      writeFile(std::filesystem::path(syo.outDir) / "synth.json", synthJson(r));
      if (!syCsv.empty()) writeFile(syCsv, synthCsv(r, true));
      std::cout << table;
      if (r.overflows()) {
        std::cerr << fmt::format("error: fabric '{}' does not fit part {} (see the utilization line; --part to choose "
                                 "another)\n",
                                 r.arch, r.part);
        return 3;
      }
      if (r.rows.back().status == "incomplete") {
        std::cerr << "error: a Yosys job did not finish (see the status column and " << syo.outDir << "/<unit>.log)\n";
        return 2;
      }
      return 0;
    }
    if (*benchCmd) return runBench(bo);
  } catch (const DiagError& e) {
    return reportDiag(e);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
