# End-to-end tests: `stepgen verify` (model + Verilator RTL, outputs bit for bit, byte
# counts) on the default fabric, lint and synthesis of the generated fabric, and bad input
# through the command line. The first verify builds the fabric into a shared cache (one
# Verilog per architecture); the others reuse it.
set(E2E_DIR ${CMAKE_BINARY_DIR}/e2e)
set(E2E_CACHE ${CMAKE_BINARY_DIR}/fabric-cache)

# The verdict is verify's exit status (0 only for PASS); each EXPECT pattern must also match
# a line of its output (tests/expect_log.sh).
# stepgen_verify_test(name arch graph [verify-args...] [EXPECT pattern...])
function(stepgen_verify_test name arch graph)
  cmake_parse_arguments(PARSE_ARGV 3 ARG "" "" "EXPECT")
  set(pats "")
  foreach(p IN LISTS ARG_EXPECT)
    list(APPEND pats -e "${p}")
  endforeach()
  add_test(NAME ${name}
           COMMAND bash ${STEPGEN_ROOT}/tests/expect_log.sh ${E2E_DIR}/${name}.log ${pats} --
                   $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/${arch} --graph ${STEPGEN_ROOT}/${graph}
                   -o ${E2E_DIR}/${name} --build-cache ${E2E_CACHE} ${ARG_UNPARSED_ARGUMENTS})
  set_tests_properties(${name} PROPERTIES TIMEOUT 1200)
endfunction()

stepgen_verify_test(e2e_repeat_default arch/default.yaml tests/data/graphs/repeat.yaml)
set_tests_properties(e2e_repeat_default PROPERTIES FIXTURES_SETUP default_fabric)
stepgen_verify_test(e2e_swiglu_default arch/default.yaml examples/swiglu/graph.yaml --inputs ${STEPGEN_ROOT}/examples/swiglu/inputs)
stepgen_verify_test(e2e_buffer_default arch/default.yaml tests/data/graphs/buffer.yaml)
# An index load (ONNX Gather's lowering): rows of a table by the meta rows' word 0, in a
# [2, 4] walk whose stops the loaded tiles keep; the outputs against rows written by hand.
stepgen_verify_test(e2e_index_load_default arch/default.yaml tests/data/graphs/index_load/graph.yaml
                    --inputs ${STEPGEN_ROOT}/tests/data/graphs/index_load/inputs
                    --reference ${STEPGEN_ROOT}/tests/data/graphs/index_load/expected)
stepgen_verify_test(e2e_shapes_default arch/default.yaml tests/data/graphs/shapes.yaml)
# A fabric whose compute units list no function that multiplies word by word (sg_cu MUL = 0,
# the unit that fits an iCE40): a K-tiled matmul summed by Accum(add) runs bit-exact, the
# model's cycles within 5 % (a graph that needs a multiplier is refused: tests/diag case
# arch_nomul_exp).
# Also through the AXI wrapper (docs/axi.md): the smallest fabric's sg_axi_top, bit-exact with
# the model and with the flat run's off-chip bytes (the default tier's AXI end-to-end test;
# SwiGLU on the default fabric through AXI is e2e_axi_swiglu_default, heavy).
stepgen_verify_test(e2e_nomul_matmul_accum tests/data/arch_small_nomul.yaml tests/data/graphs/matmul_accum.yaml --max-cycle-error 5
                    --axi EXPECT "^axi   : [0-9]+ cycles .*off-chip bytes equal, outputs bit-exact$")
# The timing model against the RTL (generator/model/timing/): a diamond graph (one stream
# broadcast to a streaming path and a buffering path that meet at an add) must finish in
# both, bit-exact, with the model's cycles within 5 % of the RTL's. A lock-step model (no
# link FIFOs) reported a deadlock here.
stepgen_verify_test(e2e_diamond_default arch/default.yaml tests/data/graphs/diamond.yaml --max-cycle-error 5)
# Decode attention of one head (examples/attention: out = softmax(q K^T) V, L = 128, and the
# same at L = 1024) on arch/attention.yaml: rowmax, Accum(max), Expand, sub, exp, rowsum,
# recip, mul and both matmuls, the score and probability tiles held in memory units;
# bit-exact, and the model's cycles within 5 % of the RTL's. The double-precision reference:
# tests/unit/test_attention.cpp.
# The attention tests share one build of arch/attention.yaml (17 attention compute units),
# verilated hierarchically (verify --hierarchical, docs/hardware.md section 6): their runs
# are short, the flat build took 3 to 5 minutes beside the other tests.
stepgen_verify_test(e2e_attention_decode arch/attention.yaml examples/attention/graph.yaml --max-cycle-error 5 --hierarchical)
set_tests_properties(e2e_attention_decode PROPERTIES FIXTURES_SETUP attention_fabric)
stepgen_verify_test(e2e_attention_decode_1k arch/attention.yaml tests/data/graphs/attention_decode_1k.yaml --max-cycle-error 5 --hierarchical)
# An example written at test time (`stepgen graph CMD ARGN --example`), then verified on
# `arch`: bit-exact, model within 5 %.
# graph_example_test(name arch cmd graph-args... [VERIFY verify-args...])
# EXPECT: patterns (no single quotes) verify's output must also match (tests/expect_log.sh).
function(graph_example_test name arch cmd)
  cmake_parse_arguments(PARSE_ARGV 3 ARG "" "" "VERIFY;EXPECT")
  string(REPLACE ";" " " args "${ARG_UNPARSED_ARGUMENTS}")
  string(REPLACE ";" " " vargs "${ARG_VERIFY}")
  set(expect "")
  foreach(p IN LISTS ARG_EXPECT)
    string(APPEND expect " -e '${p}'")
  endforeach()
  add_test(NAME ${name}
           COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/${name}; rm -rf $d
             $<TARGET_FILE:stepgen> graph ${cmd} ${args} --example $d/ex
             bash ${STEPGEN_ROOT}/tests/expect_log.sh $d.log${expect} -- \
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/${arch} --graph $d/ex/graph.yaml \
               --inputs $d/ex/inputs -o $d/v --build-cache ${E2E_CACHE} --max-cycle-error 5 ${vargs}")
  set_tests_properties(${name} PROPERTIES TIMEOUT 1800)
endfunction()
set(AZURE_KV ${STEPGEN_ROOT}/examples/attention/data/azure_kv_batches_b16_b64.csv)
# GQA: 8 query rows per KV head over a real KV-cache length from the Azure trace (batch 0,
# request 3: 376 tokens, stored as 12 tiles of 32, the last 8 rows masked with -inf), the
# example written at test time (`stepgen graph attention --kv-lengths ... --example`).
graph_example_test(e2e_attention_gqa_real_length arch/attention.yaml attention --kv-lengths ${AZURE_KV} --batch-index 0 --slot 3 --queries 8 VERIFY --hierarchical)
# Expand whose ref is Broadcast to a Map(sub) that also waits for the copies (the deadlock the
# GQA graph found): bit-exact; a 237-cycle graph, so the cycle check allows 10 %.
stepgen_verify_test(e2e_expand_broadcast arch/attention.yaml tests/data/graphs/expand_broadcast.yaml --max-cycle-error 10 --hierarchical)
# Single pass with the online-softmax rescale (`stepgen graph attention --single-pass`: Scan(max),
# Scan(max_exclusive), Accum(rescale_add)): 8 query rows, T = D = 64 (rows of 4 beats: the
# reconvergent row max needs the arch's 8-beat link FIFOs), and the paper's KV tile T = 32
# with D = 64 (the rescale widened by scale_rows of a ones tile), 4 rows; and the single pass
# over the same real 376-token cache as above (T = 64, masked). Bit-exact, model within 5 %.
stepgen_verify_test(e2e_attention_single_pass arch/attention.yaml tests/data/graphs/attention_single_pass.yaml --max-cycle-error 5 --hierarchical)
graph_example_test(e2e_attention_single_pass_t32 arch/attention.yaml attention --single-pass --kv 128 --head-dim 64 --kv-tile 32 --queries 4 VERIFY --hierarchical)
graph_example_test(e2e_attention_single_pass_real_length arch/attention.yaml attention --single-pass --kv-tile 64 --kv-lengths ${AZURE_KV}
                       --batch-index 0 --slot 3 --queries 8 VERIFY --hierarchical)
# Accum(rescale_add) over one-beat tiles (tests/data/graphs/rescale_one_beat.yaml): the unit
# takes a beat every other cycle there (its add is a second stage), and that is the graph's
# bound. The model without that rule was 6.6 % fast (199 against 213 cycles); within 3 %.
stepgen_verify_test(e2e_rescale_one_beat arch/attention.yaml tests/data/graphs/rescale_one_beat.yaml --max-cycle-error 3 --hierarchical)
# EagerMerge on a compute unit, in arrival order: the matmul's tiles arrive long after the
# loaded ones, so the output is input 1 first; the model finds that order from its timing
# (tests/unit/test_merge.cpp). Bit-exact, model within 5 %.
stepgen_verify_test(e2e_merge_attention arch/attention.yaml tests/data/graphs/merge.yaml --max-cycle-error 5 --hierarchical)
# A feedback cycle (docs/graph_format.md#feedback-streams): 12 rows dealt one at a time to
# the region that reported itself free first, through Map(select) signals with initial tokens
# merged in arrival order back into the Partition's selector. Which rows go where is decided
# by the fabric's timing; the harness logs each merge decision (sim/harness/decision_log.hpp):
# 15 of them (12 rows + 3 initial tokens), none other than the model's own. The rows'
# placement rule by plain loops: tests/unit/test_feedback.cpp; the replay of another order:
# tests/unit/test_decisions.cpp.
stepgen_verify_test(e2e_feedback_dispatch arch/attention.yaml tests/data/graphs/feedback.yaml --max-cycle-error 10 --hierarchical
                    EXPECT "^arbitration: 15 merge decisions in the fabric, 0 differ from the model's own$")
set_tests_properties(e2e_feedback_dispatch e2e_merge_attention e2e_rescale_one_beat e2e_attention_decode_1k e2e_attention_gqa_real_length e2e_expand_broadcast e2e_attention_single_pass
                     e2e_attention_single_pass_t32 e2e_attention_single_pass_real_length
                     PROPERTIES FIXTURES_REQUIRED attention_fabric)
# GQA decode over requests of their own KV lengths on 4 parallel regions (arch/gqa.yaml,
# `stepgen graph gqa-decode`): the first 8 requests of Azure batch 0 with their KV lengths
# divided by 8 (138, 132, 130, 47, 131, 128, 139, 137 tokens: 5 KV tiles of 32 or fewer,
# every last tile masked), each region a single-pass attention over its requests' run loads;
# both static strategies map onto the fabric (verify fails when they do not) and run on the
# model. Their values against double: tests/unit/test_gqa_decode.cpp. The RTL runs of the
# static strategies are the dynpar study's (docs/results/dynpar.csv, 42 runs, bit-exact): CI builds one
# ~100-unit fabric only, the dynamic one below, because a cold build of each takes 1,000 to
# 2,700 s of CI's 90 minutes.
foreach(strategy coarse interleave)
  graph_example_test(e2e_gqa_decode_${strategy} arch/gqa.yaml gqa-decode --kv-lengths ${AZURE_KV} --batch-index 0
                     --requests 8 --kv-scale 8 --regions 4 --strategy ${strategy} VERIFY --model-only)
  set_tests_properties(e2e_gqa_decode_${strategy} PROPERTIES TIMEOUT 300)
endforeach()
# The same with the step's own k and v rows appended to the caches first (--append: state
# tensors): the appends run in a section of their own, the attention over L_b + 1 tokens in
# the next (values against double: tests/unit/test_gqa_decode.cpp). Model only here; the RTL
# run is the heavy e2e_gqa_decode_append_rtl (a cold build of the ~100-unit fabric).
graph_example_test(e2e_gqa_decode_append arch/gqa.yaml gqa-decode --kv-lengths ${AZURE_KV} --batch-index 0
                   --requests 8 --kv-scale 8 --regions 4 --append VERIFY --model-only)
graph_example_test(e2e_gqa_decode_append_rtl arch/gqa.yaml gqa-decode --kv-lengths ${AZURE_KV} --batch-index 0
                   --requests 8 --kv-scale 8 --regions 4 --append VERIFY --hierarchical EXPECT "^outputs: bit-exact$" "^sections: 2 ")
set_tests_properties(e2e_gqa_decode_append_rtl PROPERTIES TIMEOUT 3600 COST 50000)
# The dynamic strategy on arch/gqa_dynamic.yaml: the first 8 requests of Azure batch 10 at
# KV / 8 (4, 9, 2, 1, 11, 6, 7, 5 KV tiles), dealt one at a time by the Partition whose
# selector is the merge of the four regions' free signals (the feedback cycle). Every region
# frees at least one KV tile (about 1,000 cycles) apart from the next, so the dispatch is
# decided by the regions' work, not by a cycle-level race. Bit-exact outputs per region mean
# the RTL dealt the requests as the model did; model within 5 %.
# Verilated hierarchically (verify --hierarchical: sg_cu once): flat, the fabric was
# 2.7 M lines of C++ that took 15 to 50 minutes and 4.6 GB to build beside the other tests;
# hierarchical, about 9 minutes and 1.9 GB, and the run of 18,008 cycles 115 s instead of 32.
# Still among the suite's longest tests, so the highest COST makes ctest start it early.
graph_example_test(e2e_gqa_decode_dynamic arch/gqa_dynamic.yaml gqa-decode --kv-lengths ${AZURE_KV} --batch-index 10
                   --requests 8 --kv-scale 8 --regions 4 --strategy dynamic VERIFY --hierarchical)
set_tests_properties(e2e_gqa_decode_dynamic PROPERTIES TIMEOUT 3600 COST 100000)
# The whole of Azure batch 0 (16 requests, real KV lengths, 146k cycles), where regions free
# within a few cycles of each other (15 of its requests have 981 to 1,145 tokens) and the
# fabric decides some near ties otherwise than the model. Each of the 4 regions sends one
# free signal per initial token and per request, 4 + 16 = 20, through two leaf merges and the
# root: 40 decisions, taken from the harness's decision log; the verdict holds the outputs
# to the model replaying them (docs/hardware.md section 6). Same fabric build as above.
graph_example_test(e2e_gqa_decode_dynamic_b0 arch/gqa_dynamic.yaml gqa-decode --kv-lengths ${AZURE_KV} --batch-index 0
                   --regions 4 --strategy dynamic VERIFY --hierarchical
                   EXPECT "^arbitration: 40 merge decisions in the fabric, [0-9]+ differ from the model")
set_tests_properties(e2e_gqa_decode_dynamic_b0 PROPERTIES TIMEOUT 3600 COST 90000)
# The AXI wrapper (docs/axi.md): the SwiGLU example through sg_axi_top (AXI4 masters served by
# the harness's AXI memory, configuration and start over AXI4-Lite), bit-exact with the model
# and with the flat run's off-chip bytes; its cycles are reported beside the flat run's.
stepgen_verify_test(e2e_axi_swiglu_default arch/default.yaml examples/swiglu/graph.yaml
                    --inputs ${STEPGEN_ROOT}/examples/swiglu/inputs --axi
                    EXPECT "^axi   : [0-9]+ cycles .*off-chip bytes equal, outputs bit-exact$")
set_tests_properties(e2e_swiglu_default e2e_buffer_default e2e_shapes_default e2e_diamond_default e2e_axi_swiglu_default
                     PROPERTIES FIXTURES_REQUIRED default_fabric)
# Verilated hierarchically (sg_cu once: a 21 s build against 37 s flat, 2 cores, no ccache, 2026-12-04).
# Scan(add), Expand and Parallelize on compute units (tests/data/arch_dyn_ops.yaml, sg_cu DYN = 1),
# and Map(sub), Map(exp), Map(recip), Map(mul) (exp_sub.yaml, softmax_parts.yaml, sg_cu ATTN = 1):
# bit-exact, bytes equal, and the model's cycles within 5 % of the RTL's. The expected outputs
# by plain loops over the same inputs: tests/unit/test_dyn_ops_map.cpp.
foreach(g scan scan_max expand parallelize parallelize_scan exp_sub softmax_parts)
  set(name e2e_${g}_dyn_ops)
  add_test(NAME ${name}
           COMMAND bash ${STEPGEN_ROOT}/tests/expect_log.sh ${E2E_DIR}/${name}.log --
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/tests/data/arch_dyn_ops.yaml
               --graph ${STEPGEN_ROOT}/tests/data/graphs/${g}.yaml -o ${E2E_DIR}/${name} --build-cache ${E2E_CACHE}
               --max-cycle-error 5 --hierarchical)
  set_tests_properties(${name} PROPERTIES TIMEOUT 900)
endforeach()
# Partition(b 0) on compute units of its own: bit-exact, bytes equal, RTL 50 cycles against
# the model's 49. The graph is DRAM-bound (one channel serves two loads and two stores). Until
# the model's DRAM channels took a piece at any cycle and the partition units let go of
# their input as their output register empties (engine.hpp kOutHop), the model was 8 cycles
# over; the partition units alone: tests/rtl/test_rtl_cu.cpp.
stepgen_verify_test(e2e_partition_dyn_ops tests/data/arch_dyn_ops.yaml tests/data/graphs/partition.yaml --max-cycle-error 5 --hierarchical)
# RMSNorm (`stepgen graph rmsnorm`: squares, rowsum, 1/D, + eps, Map(rsqrt), two products) of
# 8 rows of 64: 7 compute units and 6 address generators on this 4 + 4 fabric, so at least
# two sections, and two must do; bit-exact, model within 5 %. Against a double reference: tests/unit/test_rmsnorm.cpp.
graph_example_test(e2e_rmsnorm_dyn_ops tests/data/arch_dyn_ops.yaml rmsnorm --rows 8 --dim 64 VERIFY --hierarchical
                   EXPECT "^outputs: bit-exact$" "^sections: 2 ")
# RoPE (`stepgen graph rope`: rotate-half, four Map(mul), Map(sub), Map(add), halves loaded
# and stored at their origins) of Azure batch 0's 16 requests x 2 heads, Dh 64, at their
# real KV lengths: 6 compute units and 6 address generators, so more than one section on
# this fabric (the carries take address generators too: 5 at this writing); bit-exact, model
# within 5 %. Against a double reference: tests/unit/test_rope.cpp.
graph_example_test(e2e_rope_dyn_ops tests/data/arch_dyn_ops.yaml rope --kv-lengths ${AZURE_KV} --batch-index 0 --heads 2
                   --head-dim 64 VERIFY --hierarchical EXPECT "^outputs: bit-exact$" "^sections: ([2-9]|[1-9][0-9]) ")
set_tests_properties(e2e_scan_dyn_ops PROPERTIES FIXTURES_SETUP dyn_ops_fabric)
set_tests_properties(e2e_rope_dyn_ops e2e_rmsnorm_dyn_ops e2e_scan_max_dyn_ops e2e_expand_dyn_ops e2e_parallelize_dyn_ops e2e_parallelize_scan_dyn_ops e2e_partition_dyn_ops e2e_exp_sub_dyn_ops e2e_softmax_parts_dyn_ops
                     PROPERTIES FIXTURES_REQUIRED dyn_ops_fabric)

# The FST waveform test is e2e_sections_swiglu_small (tests/sections.cmake): it shares the
# traced build of arch/small.yaml with the other sections test.

# Lint (-Wall, no waivers beyond the commented ones in the files) and the fast Yosys check
# (flows/synth_fabric.sh --check: whole small fabrics elaborated, units synthesized).
add_test(NAME rtl_lint_generated COMMAND bash ${STEPGEN_ROOT}/tests/rtl/lint_generated.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/lint default)
# scripts/profile_rtl.sh on the shipped SwiGLU example (tests/rtl/profile.sh). Heavy: a
# second Verilator build and perf.
add_test(NAME e2e_rtl_profile_default COMMAND bash ${STEPGEN_ROOT}/tests/rtl/profile.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/profile_default)
set_tests_properties(e2e_rtl_profile_default PROPERTIES TIMEOUT 900)
add_test(NAME rtl_lint_generated_heavy COMMAND bash ${STEPGEN_ROOT}/tests/rtl/lint_generated.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/lint_heavy heavy)
set_tests_properties(rtl_lint_generated rtl_lint_generated_heavy PROPERTIES TIMEOUT 600)
add_test(NAME rtl_yosys_small COMMAND bash ${STEPGEN_ROOT}/flows/synth_fabric.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/yosys --check)
set_tests_properties(rtl_yosys_small PROPERTIES TIMEOUT 600)

# Reconvergent paths (map/buffering.hpp): x broadcast to an Accum over 8 tiles and to the add
# that waits for their sum (tests/data/graphs/residual_accum.yaml). Buffering puts the 8
# waiting tiles (2,048 B, hand-counted: 8 x 64 words x 4 B) in a memory-unit buffer of one
# group (Bufferize b = 1): bit-exact, model within 5 %. With --no-buffering the
# model and the RTL both deadlock (exit 2).
add_test(NAME e2e_residual_buffer_default
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/residual_accum; rm -rf $d $d.nb
           bash ${STEPGEN_ROOT}/tests/expect_log.sh $d.log -e '^outputs: bit-exact$' --              $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/default.yaml                --graph ${STEPGEN_ROOT}/tests/data/graphs/residual_accum.yaml -o $d --build-cache ${E2E_CACHE} --max-cycle-error 5
           grep -q '^buffer bx -> zip_res : memory-unit buffer; the long path (sum) holds 2048 B' $d/mapping.txt
           grep -q '^op buffer_keep_x_res (Bufferize) -> u_mu' $d/mapping.txt
           rc=0; $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/default.yaml --no-buffering              --graph ${STEPGEN_ROOT}/tests/data/graphs/residual_accum.yaml -o $d.nb --build-cache ${E2E_CACHE} > $d.nb.log 2>&1 || rc=\$?
           cat $d.nb.log; [ \$rc -eq 2 ] || { echo expected exit 2, got \$rc; exit 1; }
           grep -q '^model : DEADLOCK' $d.nb.log
           grep -q '^rtl   : deadlock' $d.nb.log")
set_tests_properties(e2e_residual_buffer_default PROPERTIES TIMEOUT 600 FIXTURES_REQUIRED default_fabric)
# KV-cache append (`stepgen graph kv-append`, a state tensor): Azure batch 0's 16 requests,
# each new 64-word row written by the address generator's random store at its request's own
# KV length, the cache then read back whole (L = the longest + 1 = 1,146 rows per request).
# The state order cuts the graph in two sections although it fits one context; bit-exact
# (the read-back holds the new rows: tests/unit/test_kv_append.cpp checks the model against a
# plain loop), model within 5 %.
graph_example_test(e2e_kv_append_default arch/default.yaml kv-append --kv-lengths ${AZURE_KV} --batch-index 0 --head-dim 64
                   EXPECT "^outputs: bit-exact$" "^sections: 2 ")
set_tests_properties(e2e_kv_append_default PROPERTIES FIXTURES_REQUIRED default_fabric)

# Bad input through the command line: tests/diag.cmake (golden diagnostics).
# Determinism of the command's output folder (the library-level test is in test_mapper.cpp).
# The fabric built with the synthesis bodies (STEPGEN_SIM_BODY=0, docs/hardware.md section 6:
# the banked memory's priority search, the near/far adder): bit-exact, cycles within 5 %.
# Heavy (a second build of the default fabric); the default tier keeps the bodies' unit tests
# (tests/rtl_units.cmake: Vsg_cu_bank against Vsg_cu_banks) and their equivalence (rtl_prims_equiv).
stepgen_verify_test(e2e_synthesis_bodies_default arch/default.yaml examples/swiglu/graph.yaml --max-cycle-error 5)
set_tests_properties(e2e_synthesis_bodies_default PROPERTIES ENVIRONMENT STEPGEN_SIM_BODY=0)
# A whole decoder layer (docs/graph_format.md#decoder-layer) on arch/decoder.yaml. Default
# tier: the dense model's layer for 2 real KV lengths of Azure batch 0 (/ 8) maps, runs in
# sections and finishes in the model; the MoE model's true-dims layer runs in the timing-only
# model with its real routing trace. Heavy: the same dense layer for 16 requests in RTL,
# bit-exact (a ~150 s build of the 56-unit fabric). Values against a double reference:
# tests/unit/test_decoder_layer.cpp.
graph_example_test(e2e_decoder_layer_model arch/decoder.yaml decoder-layer --model llama-dense --kv-lengths ${AZURE_KV}
                   --batch-index 0 --requests 2 --kv-scale 8 VERIFY --model-only EXPECT "^model : [0-9]+ cycles")
graph_example_test(e2e_decoder_layer_rtl arch/decoder.yaml decoder-layer --model llama-dense --kv-lengths ${AZURE_KV}
                   --batch-index 0 --kv-scale 8 EXPECT "^outputs: bit-exact$")
set_tests_properties(e2e_decoder_layer_rtl PROPERTIES TIMEOUT 3600 COST 50000)
# Mixtral's layer with its MoE routed by the real Mixtral trace, Azure batch 0 at KV / 8, in
# RTL: bit-exact (heavy; the same fabric build).
graph_example_test(e2e_decoder_layer_mixtral_replayed_rtl arch/decoder.yaml decoder-layer --model mixtral
                   --trace ${STEPGEN_ROOT}/examples/moe/data/routing_mixtral8x7b_b64.csv --kv-lengths ${AZURE_KV}
                   --batch-index 0 --kv-scale 8 EXPECT "^outputs: bit-exact$")
set_tests_properties(e2e_decoder_layer_mixtral_replayed_rtl PROPERTIES TIMEOUT 3600)
# The router on the fabric (docs/step_semantics.md#topk: Map topk, topk_logits and a softmax
# for the weights, spread to one 64-byte piece each): a whole MoE layer of 8 experts, top 2,
# 16 tokens, and Qwen3's scaled decoder layer (16 experts, top 4) for Azure batch 0 at KV / 8,
# in RTL: bit-exact, cycles within 5 % (heavy; the same fabric build). The weights' unit
# test (topk_logits on 3,000 adversarial rows) is in the default tier (test_rtl cu_parts).
add_test(NAME e2e_router_moe_decoder
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/e2e_router_moe_decoder; rm -rf $d
           $<TARGET_FILE:stepgen> graph moe --router --experts 8 --k 2 --batch 16 --hidden 64 --ffn 64 --tile-b 0 --tile-f 32 -o $d/ex > /dev/null
           bash ${STEPGEN_ROOT}/tests/expect_log.sh $d.log -e '^outputs: bit-exact$' -- \
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/decoder.yaml --graph $d/ex/graph.yaml --inputs $d/ex/inputs \
               -o $d/v --build-cache ${E2E_CACHE} --max-cycle-error 5")
graph_example_test(e2e_decoder_layer_qwen3_router_rtl arch/decoder.yaml decoder-layer --model qwen3-moe --kv-lengths ${AZURE_KV}
                   --batch-index 0 --kv-scale 8 EXPECT "^outputs: bit-exact$")
set_tests_properties(e2e_router_moe_decoder e2e_decoder_layer_qwen3_router_rtl PROPERTIES TIMEOUT 3600)
add_test(NAME decoder_layer_true_dims
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/decoder_true; rm -rf $d
           $<TARGET_FILE:stepgen> graph decoder-layer --model qwen3-moe --dims true --lengths 300,7 --example $d
           test -s $d/routing.csv && test ! -e $d/inputs/x.npy
           $<TARGET_FILE:stepgen> model --timing-only --arch ${STEPGEN_ROOT}/arch/unbounded.yaml --graph $d/graph.yaml              --inputs $d/inputs > $d.log
           grep -E '^cycles +[0-9]+' $d.log")
set_tests_properties(decoder_layer_true_dims PROPERTIES TIMEOUT 300)
# Two verify processes building one fabric into a shared --build-cache at once.
add_test(NAME e2e_build_cache_shared COMMAND bash ${STEPGEN_ROOT}/tests/rtl/build_cache_shared.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/cache_shared)
add_test(NAME cli_determinism COMMAND bash ${STEPGEN_ROOT}/tests/rtl/cli_determinism.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/det)

# A deadlocking graph is reported (model and RTL watchdog), never hangs. --no-buffering:
# buffering (map/buffering.hpp) would give its short path the memory-unit buffer it lacks.
add_test(NAME e2e_deadlock_default COMMAND bash ${STEPGEN_ROOT}/tests/rtl/deadlock.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/deadlock ${E2E_CACHE}
         arch/default.yaml tests/data/graphs/deadlock.yaml x ld --no-buffering)
set_tests_properties(e2e_deadlock_default PROPERTIES TIMEOUT 900 FIXTURES_REQUIRED default_fabric)
# The single-pass attention graph on 2-beat link FIFOs: the scores are Broadcast to the row
# max (which needs a row of 4 beats before it emits) and to the subtraction that waits for
# that max; the subtraction's FIFO holds 2 beats, so the scores stop (arch/attention.yaml
# has 8-beat FIFOs for this graph). Its fabric is used by this test alone and is verilated
# hierarchically (17 attention compute units: about 5 minutes flat beside the other tests).
add_test(NAME e2e_deadlock_single_pass_fifo2 COMMAND bash ${STEPGEN_ROOT}/tests/rtl/deadlock.sh $<TARGET_FILE:stepgen>
         ${E2E_DIR}/deadlock_sp ${E2E_CACHE} tests/data/arch_attention_fifo2.yaml tests/data/graphs/attention_single_pass.yaml s scores
         --hierarchical --no-buffering)
set_tests_properties(e2e_deadlock_single_pass_fifo2 PROPERTIES TIMEOUT 900)

# The PyTorch blocks through the ONNX importer (examples/pytorch, docs/onnx.md): in the model
# and Verilator on arch/onnx_small.yaml (one fabric for both), bit-exact, and the outputs within
# the importer's tolerance of PyTorch's own (verify --reference exits 2 outside it). The dense
# block: one head over a KV cache; the Llama block: 2 heads, RoPE, causal mask (both cut into
# sections: docs/results/pytorch_blocks.csv); the embedding block: a token lookup (ONNX
# Gather: an index load) and a projection.
foreach(block dense_block llama_block embed_block)
  add_test(NAME e2e_pytorch_${block}
           COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/pytorch_${block}; rm -rf $d
             $<TARGET_FILE:stepgen> import onnx ${STEPGEN_ROOT}/examples/pytorch/${block}/model.onnx -o $d/import --data ${STEPGEN_ROOT}/examples/pytorch/${block}/data
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_small.yaml --graph $d/import/graph.yaml --inputs $d/import/inputs -o $d/v --reference $d/import/expected --build-cache ${E2E_CACHE} --max-cycle-error 5")
  set_tests_properties(e2e_pytorch_${block} PROPERTIES TIMEOUT 900)
endforeach()
# One build of the fabric for both (as e2e_repeat_default's fixture does for arch/default.yaml).
set_tests_properties(e2e_pytorch_dense_block PROPERTIES FIXTURES_SETUP onnx_small_fabric)
set_tests_properties(e2e_pytorch_llama_block e2e_pytorch_embed_block PROPERTIES FIXTURES_REQUIRED onnx_small_fabric)
# The MLP block in row tiles (examples/pytorch/mlp_block/schedule.yaml: 8 tiles of 16 of its
# 128 token rows; one tile does not fit the compute unit, M-302): bit-exact, within the
# tolerance of PyTorch or, where its residual cancels, the running error bound.
add_test(NAME e2e_pytorch_mlp_block_tiled
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/pytorch_mlp_block_tiled; e=${STEPGEN_ROOT}/examples/pytorch/mlp_block; rm -rf $d
           $<TARGET_FILE:stepgen> import onnx $e/model.onnx -o $d/import --data $e/data --schedule $e/schedule.yaml
           $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_small.yaml --graph $d/import/graph.yaml --inputs $d/import/inputs -o $d/v --reference $d/import/expected --build-cache ${E2E_CACHE} --max-cycle-error 5")
set_tests_properties(e2e_pytorch_mlp_block_tiled PROPERTIES FIXTURES_REQUIRED onnx_small_fabric TIMEOUT 900)
# The tiles `--arch` chooses for that fabric, 64 rows: each product computes 32,768 cycles with
# every link still, which the harness's default watchdog (20,000 cycles) once took for a
# deadlock; verify waits at least twice the longest computation the model times.
add_test(NAME e2e_pytorch_mlp_block_arch_tiles
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/pytorch_mlp_block_arch; e=${STEPGEN_ROOT}/examples/pytorch/mlp_block; rm -rf $d
           $<TARGET_FILE:stepgen> import onnx $e/model.onnx -o $d/import --data $e/data --arch ${STEPGEN_ROOT}/arch/onnx_small.yaml
           grep -q 'tile: \\[64, 32\\], iter: \\[2\\]' $d/import/graph.yaml
           $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_small.yaml --graph $d/import/graph.yaml --inputs $d/import/inputs -o $d/v --reference $d/import/expected --build-cache ${E2E_CACHE} --max-cycle-error 5")
set_tests_properties(e2e_pytorch_mlp_block_arch_tiles PROPERTIES FIXTURES_REQUIRED onnx_small_fabric TIMEOUT 900)
# RMSNorm's residual as the importer writes it (tests/unit/test_buffering.cpp counts the bytes):
# a one-row tile takes a memory-unit buffer, which the model once took for a deadlock (its
# rowsum let go of a tile only as its output left; the RTL takes the whole row first); a
# 16-row tile is cut into two sections, where a buffer deadlocks in Verilator.
foreach(rows 1row 16row)
  add_test(NAME e2e_rmsnorm_residual_${rows}
           COMMAND $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_small.yaml
                   --graph ${STEPGEN_ROOT}/tests/data/graphs/rmsnorm_residual_${rows}.yaml -o ${E2E_DIR}/rmsnorm_residual_${rows}
                   --build-cache ${E2E_CACHE} --max-cycle-error 5)
  set_tests_properties(e2e_rmsnorm_residual_${rows} PROPERTIES FIXTURES_REQUIRED onnx_small_fabric TIMEOUT 900)
endforeach()
# The Qwen3-MoE block (its MoE lowered to the router layer, docs/onnx.md#moe) on
# arch/onnx_moe.yaml, the decoder fabric with fp32 multipliers: bit-exact, within the
# propagated tolerance of PyTorch's output (heavy: a ~2-minute build of a 56-unit fabric; the
# default tier checks the block against PyTorch in the model, tests/unit/test_onnx_import.cpp).
add_test(NAME e2e_pytorch_qwen3_moe_block
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/pytorch_qwen3_moe_block; rm -rf $d
           $<TARGET_FILE:stepgen> import onnx ${STEPGEN_ROOT}/examples/pytorch/qwen3_moe_block/model.onnx -o $d/import --data ${STEPGEN_ROOT}/examples/pytorch/qwen3_moe_block/data
           bash ${STEPGEN_ROOT}/tests/expect_log.sh $d.log -e '^outputs: bit-exact$' -e '^reference: .*: within$' -- \
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_moe.yaml --graph $d/import/graph.yaml --inputs $d/import/inputs -o $d/v --reference $d/import/expected --build-cache ${E2E_CACHE} --max-cycle-error 5")
set_tests_properties(e2e_pytorch_qwen3_moe_block PROPERTIES TIMEOUT 1800)
# The MLP block with --arch arch/onnx_moe.yaml, whose compute unit has silu and accum: its
# SwiGLU becomes builders/swiglu's layer as a stage (docs/onnx.md#swiglu), in row tiles of 64:
# bit-exact, within the running error bound of PyTorch (the fabric's sigmoid table). Heavy
# for the same fabric build as the Qwen3-MoE block's; the default tier checks the stage in the
# model (tests/unit/test_onnx_import.cpp).
add_test(NAME e2e_pytorch_mlp_block_swiglu_stage
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/pytorch_mlp_block_swiglu; e=${STEPGEN_ROOT}/examples/pytorch/mlp_block; rm -rf $d
           $<TARGET_FILE:stepgen> import onnx $e/model.onnx -o $d/import --data $e/data --arch ${STEPGEN_ROOT}/arch/onnx_moe.yaml
           grep -q 'op: Map, fn: silu' $d/import/graph.yaml
           $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_moe.yaml --graph $d/import/graph.yaml --inputs $d/import/inputs -o $d/v --reference $d/import/expected --build-cache ${E2E_CACHE} --max-cycle-error 5")
set_tests_properties(e2e_pytorch_mlp_block_swiglu_stage PROPERTIES TIMEOUT 1800)
# The dense block with silu_function (docs/onnx.md#silu): its SiLU, x * sigmoid(x) outside a
# SwiGLU stage, is one Map silu on arch/onnx_moe.yaml's compute unit (no Sigmoid's exp left):
# bit-exact, within the tolerance or the running error bound of PyTorch. Heavy for the same
# fabric; the default tier checks the fusion in the model (tests/unit/test_onnx_import.cpp).
add_test(NAME e2e_pytorch_dense_block_silu
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/pytorch_dense_block_silu; e=${STEPGEN_ROOT}/examples/pytorch/dense_block; rm -rf $d; mkdir -p $d
           printf 'silu_function: true\\n' > $d/schedule.yaml
           $<TARGET_FILE:stepgen> import onnx $e/model.onnx -o $d/import --data $e/data --schedule $d/schedule.yaml
           test \"$(grep -c 'op: Map, fn: silu' $d/import/graph.yaml)\" = 1
           test \"$(grep -c 'op: Map, fn: exp' $d/import/graph.yaml)\" = 1
           $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_moe.yaml --graph $d/import/graph.yaml --inputs $d/import/inputs -o $d/v --reference $d/import/expected --build-cache ${E2E_CACHE} --max-cycle-error 5")
set_tests_properties(e2e_pytorch_dense_block_silu PROPERTIES TIMEOUT 1800)
# The dense block with the schedule --arch arch/onnx_moe.yaml chooses: its attention over the
# KV cache as builders/attention's single pass, its SwiGLU as a stage, no SiLU left outside
# (docs/onnx.md#attention): bit-exact, within the tolerance of PyTorch. Heavy for the same
# fabric; the default tier checks the attention stage against double in the model.
add_test(NAME e2e_pytorch_dense_block_stages
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/pytorch_dense_block_stages; e=${STEPGEN_ROOT}/examples/pytorch/dense_block; rm -rf $d
           $<TARGET_FILE:stepgen> import onnx $e/model.onnx -o $d/import --data $e/data --arch ${STEPGEN_ROOT}/arch/onnx_moe.yaml
           grep -q '# stage attn' $d/import/graph.yaml
           grep -q '# stage mlp' $d/import/graph.yaml
           $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_moe.yaml --graph $d/import/graph.yaml --inputs $d/import/inputs -o $d/v --reference $d/import/expected --build-cache ${E2E_CACHE} --max-cycle-error 5")
set_tests_properties(e2e_pytorch_dense_block_stages PROPERTIES TIMEOUT 1800)
# The wide MLP block (two 128 KB weights, twice arch/onnx_moe.yaml's compute unit) with the
# schedule --arch chooses: each product a linear stage over K and output column tiles
# (docs/onnx.md#linear): bit-exact, within the running error bound of PyTorch. Heavy for the
# same fabric and a 67,761-cycle run; the default tier checks the stages in the model.
add_test(NAME e2e_pytorch_wide_mlp_block
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/pytorch_wide_mlp_block; e=${STEPGEN_ROOT}/examples/pytorch/wide_mlp_block; rm -rf $d
           $<TARGET_FILE:stepgen> import onnx $e/model.onnx -o $d/import --data $e/data --arch ${STEPGEN_ROOT}/arch/onnx_moe.yaml
           test \"$(grep -c '# stage lin' $d/import/graph.yaml)\" = 2
           $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/onnx_moe.yaml --graph $d/import/graph.yaml --inputs $d/import/inputs -o $d/v --reference $d/import/expected --build-cache ${E2E_CACHE} --max-cycle-error 5")
set_tests_properties(e2e_pytorch_wide_mlp_block PROPERTIES TIMEOUT 2400)
# A Qwen3-30B-A3B-shaped model without its weights (scripts/qwen3_structure_onnx.py, 2 of its
# 48 layers: 32 query heads, 128 experts top 8): both MoE blocks found and lowered to stages
# that replay the real Qwen3 trace; the weights stay graph inputs (none written). The timing-only
# model runs it on the unbounded fabric: each layer's MoE stage in a section of its own, between
# the store of its input and the load of its output, so 2 cuts a layer and 5 sections. The 48
# layers' import and timing-only model, time and memory: `stepgen bench --only large`.
add_test(NAME onnx_import_qwen3_structure
         COMMAND bash -c "set -euo pipefail; d=${E2E_DIR}/onnx_qwen3_structure; rm -rf $d; mkdir -p $d
           /usr/bin/python3 ${STEPGEN_ROOT}/scripts/qwen3_structure_onnx.py $d/m.onnx --layers 2 --kv 64
           $<TARGET_FILE:stepgen> import onnx $d/m.onnx -o $d/imp --routing-trace ${STEPGEN_ROOT}/examples/moe/data/routing_qwen3_30b_a3b_b64.csv > $d/log
           test \$(grep -c '^  # stage moe' $d/imp/graph.yaml) -eq 2
           grep -q '^  - {name: moe1_route, op: SelectGen, trace: routing.csv' $d/imp/graph.yaml
           grep -q 'moe1_wg: {shape: \\[moe1_E\\*moe1_F, moe1_D\\], role: input}' $d/imp/graph.yaml
           grep -q 'symbols: {moe0_B: 1, moe0_D: 2048, moe0_F: 768, moe0_E: 128, moe0_K: 8' $d/imp/graph.yaml
           test ! -e $d/imp/inputs/moe0_wg.npy
           grep -q 'graph inputs not written (give --data): rope_cos, ' $d/log
           $<TARGET_FILE:stepgen> model --timing-only --arch ${STEPGEN_ROOT}/arch/unbounded.yaml --graph $d/imp/graph.yaml > $d/timing
           grep -q ', 5 section(s)$' $d/timing")
set_tests_properties(onnx_import_qwen3_structure PROPERTIES LABELS "onnx;quick" TIMEOUT 120)
