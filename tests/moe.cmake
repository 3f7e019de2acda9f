# MoE layer (issue 3) through the command line: the dynamic tiling study must find
# bit-identical outputs for every token tile (exit 0), and graph moe + model must run on a
# shipped trace with a located error for a bad one. Qwen3 dynamic off-chip bytes by hand:
# x 64*64*4 + routing rows 64*64 + 60 non-empty experts * 3 weights * 24*64*4 + rw 64*8*4
# + y 64*64*4 = 1144832.
add_test(NAME moe_study_tiling
         COMMAND stepgen study tiling --arch ${STEPGEN_ROOT}/arch/default.yaml
                 --data ${STEPGEN_ROOT}/examples/moe/data -o ${CMAKE_BINARY_DIR}/moe_study)
add_test(NAME moe_cli_graph_model
         COMMAND bash -c "set -e
           $<TARGET_FILE:stepgen> graph moe --trace ${STEPGEN_ROOT}/examples/moe/data/routing_qwen3_30b_a3b_b64.csv \
             --experts 128 --k 8 --hidden 64 --ffn 24 --tile-b 0 --tile-f 8 -o moe_cli
           $<TARGET_FILE:stepgen> model --arch ${STEPGEN_ROOT}/arch/default.yaml --graph moe_cli/graph.yaml \
             --inputs moe_cli/inputs -o moe_cli/model | grep -q 'off-chip 1144832 B'
           test -f moe_cli/model/y.npy
           if $<TARGET_FILE:stepgen> graph moe --trace ${STEPGEN_ROOT}/examples/moe/data/routing_qwen3_30b_a3b_b64.csv \
             --experts 100 --k 8 -o moe_bad 2> err.txt; then exit 1; fi
           grep -q 'routing_qwen3_30b_a3b_b64.csv' err.txt
           test ! -e moe_bad"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(moe_study_tiling moe_cli_graph_model PROPERTIES LABELS "moe")

# The dispatch half on a fabric (route-mode memory unit): RTL bit-exact, bytes equal, cycles
# within 10 %, both traces, static token tile 16 and dynamic tiling (tests/rtl/moe_dispatch.sh).
foreach(c "mixtral|routing_mixtral8x7b_b64.csv|8|2|depths" "qwen3|routing_qwen3_30b_a3b_b64.csv|128|8|")
  string(REPLACE "|" ";" parts "${c}")
  list(GET parts 0 name)
  list(GET parts 1 csv)
  list(GET parts 2 experts)
  list(GET parts 3 k)
  list(LENGTH parts n)
  set(extra "")
  if(n GREATER 4)
    list(GET parts 4 extra)
  endif()
  add_test(NAME moe_dispatch_${name}
           COMMAND bash ${STEPGEN_ROOT}/tests/rtl/moe_dispatch.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/moe_dispatch_${name}
                   ${CMAKE_BINARY_DIR}/fabric-cache-moe ${STEPGEN_ROOT}/examples/moe/data/${csv} ${experts} ${k} ${extra})
  set_tests_properties(moe_dispatch_${name} PROPERTIES TIMEOUT 1200 LABELS "moe")
endforeach()
# Both build the same fabric into one cache: the first builds, the second reuses it.
set_tests_properties(moe_dispatch_mixtral PROPERTIES FIXTURES_SETUP moe_fabric)
set_tests_properties(moe_dispatch_qwen3 PROPERTIES FIXTURES_REQUIRED moe_fabric)
