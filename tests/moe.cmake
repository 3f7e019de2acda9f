# MoE layer (issue 3) through the command line: the dynamic tiling study must find
# bit-identical outputs for every token tile (exit 0), and graph moe + model must run on a
# shipped trace with a located error for a bad one. Qwen3 dynamic off-chip bytes by hand:
# x 64*64*4 + routing rows 64*64 + 60 non-empty experts * 3 weights * 24*64*4 + rw 64*8*64
# (one 64-byte row per token and slot) + y 64*64*4 = 1175552.
add_test(NAME moe_study_tiling
         COMMAND stepgen study tiling --arch ${STEPGEN_ROOT}/arch/default.yaml
                 --data ${STEPGEN_ROOT}/examples/moe/data -o ${CMAKE_BINARY_DIR}/moe_study)
add_test(NAME moe_cli_graph_model
         COMMAND bash -c "set -euo pipefail
           $<TARGET_FILE:stepgen> graph moe --trace ${STEPGEN_ROOT}/examples/moe/data/routing_qwen3_30b_a3b_b64.csv \
             --experts 128 --k 8 --hidden 64 --ffn 24 --tile-b 0 --tile-f 8 -o moe_cli
           $<TARGET_FILE:stepgen> model --arch ${STEPGEN_ROOT}/arch/default.yaml --graph moe_cli/graph.yaml \
             --inputs moe_cli/inputs -o moe_cli/model > moe_cli.log
           grep -q 'off-chip 1175552 B' moe_cli.log
           test -f moe_cli/model/y.npy
           if $<TARGET_FILE:stepgen> graph moe --trace ${STEPGEN_ROOT}/examples/moe/data/routing_qwen3_30b_a3b_b64.csv \
             --experts 100 --k 8 -o moe_bad 2> err.txt; then exit 1; fi
           grep -q 'routing_qwen3_30b_a3b_b64.csv' err.txt
           test ! -e moe_bad"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(moe_study_tiling moe_cli_graph_model PROPERTIES LABELS "moe")

# A MoE layer on a fabric (tests/rtl/moe_fabric.sh): RTL bit-exact, bytes equal, cycles within
# 10 %, static token tile 16 and dynamic tiling. The whole layer on both traces, and the
# dispatch half alone on Mixtral. moe_fifo_depths_mixtral: the dynamic Mixtral layer on
# copies of the fabric with FIFO depths 1 and 8 gives moe_layer_mixtral's depth-2 outputs
# (its own test, so that its two fabric builds run beside the other MoE tests).
set(MOE_MIXTRAL ${STEPGEN_ROOT}/examples/moe/data/routing_mixtral8x7b_b64.csv)
set(MOE_QWEN3 ${STEPGEN_ROOT}/examples/moe/data/routing_qwen3_30b_a3b_b64.csv)
foreach(c "layer_mixtral|${MOE_MIXTRAL}|8|2|224|32|layer"
          "layer_qwen3|${MOE_QWEN3}|128|8|24|24|layer"
          "dispatch_mixtral|${MOE_MIXTRAL}|8|2|224|32|dispatch"
          "fifo_depths_mixtral|${MOE_MIXTRAL}|8|2|224|32|depths|${CMAKE_BINARY_DIR}/moe_layer_mixtral")
  string(REPLACE "|" ";" args "${c}")
  list(POP_FRONT args name)
  add_test(NAME moe_${name}
           COMMAND bash ${STEPGEN_ROOT}/tests/rtl/moe_fabric.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/moe_${name}
                   ${CMAKE_BINARY_DIR}/fabric-cache-moe ${args})
  set_tests_properties(moe_${name} PROPERTIES TIMEOUT 1800 LABELS "moe")
endforeach()
# All build the same fabric into one cache: the first builds, the others reuse it.
set_tests_properties(moe_layer_mixtral PROPERTIES FIXTURES_SETUP moe_fabric)
set_tests_properties(moe_layer_qwen3 moe_dispatch_mixtral moe_fifo_depths_mixtral PROPERTIES FIXTURES_REQUIRED moe_fabric)

# Issue 3 item 7: a MoE layer whose routing needs deeper FIFOs than the fabric has. With the
# residual add (graph moe --residual) the x rows are broadcast to the router, which takes all
# 64 rows before it emits, and to the final add, which takes a row only when its MoE output
# exists: the add's 2-beat FIFO fills, the broadcast stops, the router never completes.
# With --no-buffering (today's behaviour kept to study it) verify must stop (RTL watchdog),
# exit 2, and the model and the RTL must name stream xr. Buffering (map/buffering.hpp) finds
# that the route unit holds all 64 rows (16,384 B) before the add can take the first, no memory
# unit is free, and cuts the graph so the add runs in a second section (moe_residual_buffered).
add_test(NAME moe_deadlock_residual
         COMMAND bash -c "set -euo pipefail
           $<TARGET_FILE:stepgen> graph moe --trace ${MOE_MIXTRAL} --experts 8 --k 2 --hidden 64 --ffn 224 \
             --tile-b 0 --tile-f 32 --residual -o moe_res > /dev/null
           rc=0; timeout 600 $<TARGET_FILE:stepgen> verify --no-buffering --arch ${STEPGEN_ROOT}/arch/moe.yaml --graph moe_res/graph.yaml \
             --inputs moe_res/inputs -o moe_res/v --build-cache ${CMAKE_BINARY_DIR}/fabric-cache-moe > moe_res.log 2>&1 || rc=$?
           cat moe_res.log; [ $rc -eq 2 ] || { echo expected exit 2, got $rc; exit 1; }
           grep -q 'model : DEADLOCK' moe_res.log
           grep -q '^  xr (load_x -> merge) (load_x -> add_res).*not taken by add_res' moe_res.log
           grep -q 'rtl   : deadlock' moe_res.log
           grep -q 'stuck: .*(stream xr)' moe_res.log"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(moe_deadlock_residual PROPERTIES TIMEOUT 900 LABELS "moe" FIXTURES_REQUIRED moe_fabric)
add_test(NAME moe_residual_buffered
         COMMAND bash -c "set -euo pipefail
           $<TARGET_FILE:stepgen> graph moe --trace ${MOE_MIXTRAL} --experts 8 --k 2 --hidden 64 --ffn 224 \
             --tile-b 0 --tile-f 32 --residual -o moe_resb > /dev/null
           bash ${STEPGEN_ROOT}/tests/expect_log.sh moe_resb.log -e '^outputs: bit-exact$' -e '^sections: 2 ' -- \
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/moe.yaml --graph moe_resb/graph.yaml \
               --inputs moe_resb/inputs -o moe_resb/v --build-cache ${CMAKE_BINARY_DIR}/fabric-cache-moe --max-cycle-error 5
           grep -q '^buffer bres -> zip_res : section cut; .* holds 16384 B' moe_resb/v/mapping.txt"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(moe_residual_buffered PROPERTIES TIMEOUT 900 LABELS "moe" FIXTURES_REQUIRED moe_fabric)

# Issue 12: a MoE layer at batch 1024 in RTL (Mixtral routing, scaled dims: hidden 64, FFN
# 224). The trace has 64 tokens, so the batch's routing is drawn with its expert frequencies
# (graph moe --synthetic); the batch is routed in 16 blocks of 64 tokens (--block 64: a route
# unit holds 64), one section each, 14 of them reloaded while the fabric runs. Static token
# tile 16 and dynamic tiling: bit-exact, bytes equal, cycles within 5 %.
foreach(tb 16 0)
  add_test(NAME moe_batch1024_tb${tb}
           COMMAND bash -c "set -euo pipefail; d=moe_b1024_${tb}; rm -rf $d
             $<TARGET_FILE:stepgen> graph moe --trace ${MOE_MIXTRAL} --experts 8 --k 2 --batch 1024 --hidden 64 --ffn 224 \
               --tile-b ${tb} --tile-f 32 --block 64 --synthetic -o $d/ex
             $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/moe.yaml --graph $d/ex/graph.yaml --inputs $d/ex/inputs \
               -o $d/v --build-cache ${CMAKE_BINARY_DIR}/fabric-cache-moe --max-cycle-error 5"
           WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  set_tests_properties(moe_batch1024_tb${tb} PROPERTIES TIMEOUT 1800 LABELS "moe" FIXTURES_REQUIRED moe_fabric)
endforeach()

# Issue 13: random graph 113 with the combine step (`graph random --combine`: the route
# cluster, a per-expert bias add and the combine cluster back to token order, beside other
# random steps) on the MoE fabric: bit-exact, bytes equal, cycles within 5 %. The expected
# rows by a plain loop: tests/unit/test_random_graph.cpp.
add_test(NAME moe_random_combine
         COMMAND bash -c "set -euo pipefail; d=moe_random_combine; rm -rf $d
           $<TARGET_FILE:stepgen> graph random --seed 113 --partition --route --combine -o $d/graph.yaml
           $<TARGET_FILE:stepgen> verify --arch ${STEPGEN_ROOT}/arch/moe.yaml --graph $d/graph.yaml -o $d/v \
             --build-cache ${CMAKE_BINARY_DIR}/fabric-cache-moe --max-cycle-error 5"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(moe_random_combine PROPERTIES TIMEOUT 900 LABELS "moe" FIXTURES_REQUIRED moe_fabric)
