# Sections (docs/architecture.md#sections): graphs larger than the fabric run section by
# section, verified in RTL bit for bit, with the model's cycles within 5 % of the RTL's.
# - SwiGLU on arch/small.yaml (two compute units for six compute operators): 3 sections,
#   with an FST waveform (tests/rtl/trace_small.sh: the suite's tracing test).
# - The same with --sections 7 (one placed op per section): 7 sections on 4 contexts, so
#   sections 4..6 are reloaded into finished contexts while the fabric runs. Traced too,
#   so that both tests share one Verilator build of the fabric.
# - A 4-layer SwiGLU stack on arch/default.yaml (7 compute units, 2 contexts): 4 sections,
#   2 of them reloaded. It shares the default fabric's Verilator build (tests/e2e.cmake).
add_test(NAME e2e_sections_swiglu_small
         COMMAND bash ${STEPGEN_ROOT}/tests/rtl/trace_small.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/e2e_sections_swiglu_small ${E2E_CACHE})
set_tests_properties(e2e_sections_swiglu_small PROPERTIES FIXTURES_SETUP small_fabric TIMEOUT 1200)
stepgen_verify_test(e2e_sections_reload_small arch/small.yaml examples/swiglu/graph.yaml
                    --inputs ${STEPGEN_ROOT}/examples/swiglu/inputs --sections 7 --max-cycle-error 5 --trace
                    EXPECT "^sections: 7 \\(3 reloaded while running\\)")
set_tests_properties(e2e_sections_reload_small PROPERTIES FIXTURES_REQUIRED small_fabric)
# The same 7 sections through the AXI wrapper (docs/axi.md): the harness, as the host, writes
# the 3 reloaded sections' words over AXI4-Lite while the fabric runs.
stepgen_verify_test(e2e_axi_sections_reload_small arch/small.yaml examples/swiglu/graph.yaml
                    --inputs ${STEPGEN_ROOT}/examples/swiglu/inputs --sections 7 --axi
                    EXPECT "^axi   : .*\\(\\+ [1-9][0-9]* reload words while running\\), off-chip bytes equal, outputs bit-exact$")
set_tests_properties(e2e_axi_sections_reload_small PROPERTIES FIXTURES_REQUIRED small_fabric)
# The hierarchical Verilator build (verify --hierarchical) runs the same 7 sections bit-exact
# in the same cycles as the flat build above (tests/rtl/hier_same.sh).
add_test(NAME e2e_hierarchical_small
         COMMAND bash ${STEPGEN_ROOT}/tests/rtl/hier_same.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/e2e_hierarchical_small ${E2E_CACHE})
set_tests_properties(e2e_hierarchical_small PROPERTIES FIXTURES_REQUIRED small_fabric TIMEOUT 1200)
add_test(NAME e2e_sections_mlp4_default
         COMMAND bash -c "set -euo pipefail; mkdir -p ${E2E_DIR}
           $<TARGET_FILE:stepgen> graph mlp --layers 4 --batch 16 --hidden 64 --ffn 128 --tile-b 8 --tile-f 32 \
             -o ${E2E_DIR}/mlp4.yaml
           bash ${STEPGEN_ROOT}/tests/expect_log.sh ${E2E_DIR}/mlp4.log -e '^sections: 4 \\(2 reloaded while running\\)' -- \
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/default.yaml --graph ${E2E_DIR}/mlp4.yaml \
             -o ${E2E_DIR}/e2e_sections_mlp4_default --build-cache ${E2E_CACHE} --max-cycle-error 5")
set_tests_properties(e2e_sections_mlp4_default PROPERTIES FIXTURES_REQUIRED default_fabric TIMEOUT 1200)
# - The Mixtral MoE layer (dynamic tiling) on arch/moe_small.yaml (6 compute units, where it
#   needs 2 sections; cut after Reassemble, the reassembled rows carried through DRAM since
#   section 0 uses all four memory units). A fabric build of its own, hierarchical (36 s
#   against 55 s flat, 2 cores, no ccache; the run of 121k cycles 15 s against 3).
add_test(NAME e2e_sections_moe_small
         COMMAND bash -c "set -euo pipefail; mkdir -p ${E2E_DIR}
           $<TARGET_FILE:stepgen> graph moe --trace ${STEPGEN_ROOT}/examples/moe/data/routing_mixtral8x7b_b64.csv \
             --experts 8 --k 2 --hidden 64 --ffn 224 --tile-b 0 --tile-f 32 -o ${E2E_DIR}/moe_sections_g > /dev/null
           bash ${STEPGEN_ROOT}/tests/expect_log.sh ${E2E_DIR}/moe_sections.log -e '^sections: 2 \\(0 reloaded while running\\)' -- \
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/moe_small.yaml --graph ${E2E_DIR}/moe_sections_g/graph.yaml \
             --inputs ${E2E_DIR}/moe_sections_g/inputs -o ${E2E_DIR}/e2e_sections_moe_small \
             --build-cache ${CMAKE_BINARY_DIR}/fabric-cache-moe-small --max-cycle-error 5 --hierarchical")
set_tests_properties(e2e_sections_moe_small PROPERTIES TIMEOUT 1200 LABELS moe FIXTURES_SETUP moe_small_fabric)
# The router's choice on the fabric (`graph moe --router --dispatch-only`: gate logits x Wr^T
# by Map(matmul_t), Map(topk) on a compute unit, its routing rows into the route unit): the
# dispatched token tiles bit-exact, model within 5 %, on the same moe_small build.
add_test(NAME e2e_router_dispatch_moe_small
         COMMAND bash -c "set -euo pipefail; mkdir -p ${E2E_DIR}
           $<TARGET_FILE:stepgen> graph moe --router --dispatch-only --experts 8 --k 2 --batch 32 --hidden 64 --ffn 64              --tile-b 8 --tile-f 32 -o ${E2E_DIR}/router_dispatch_g > /dev/null
           bash ${STEPGEN_ROOT}/tests/expect_log.sh ${E2E_DIR}/router_dispatch.log -e '^outputs: bit-exact$' --              $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/moe_small.yaml --graph ${E2E_DIR}/router_dispatch_g/graph.yaml              --inputs ${E2E_DIR}/router_dispatch_g/inputs -o ${E2E_DIR}/e2e_router_dispatch_moe_small              --build-cache ${CMAKE_BINARY_DIR}/fabric-cache-moe-small --max-cycle-error 5 --hierarchical")
set_tests_properties(e2e_router_dispatch_moe_small PROPERTIES TIMEOUT 1200 LABELS moe FIXTURES_REQUIRED moe_small_fabric)
