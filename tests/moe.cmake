# MoE layer (issue 3) through the command line: the dynamic tiling study must find
# bit-identical outputs for every token tile (exit 0), and graph moe + model must run on a
# shipped trace with a located error for a bad one. Qwen3 dynamic off-chip bytes by hand:
# x 64*64*4 + 60 non-empty experts * 3 weights * 24*64*4 + rw 64*8*4 + y 64*64*4 = 1140736.
add_test(NAME moe_study_tiling
         COMMAND stepgen study tiling --arch ${STEPGEN_ROOT}/arch/default.yaml
                 --data ${STEPGEN_ROOT}/examples/moe/data -o ${CMAKE_BINARY_DIR}/moe_study)
add_test(NAME moe_cli_graph_model
         COMMAND bash -c "set -e
           $<TARGET_FILE:stepgen> graph moe --trace ${STEPGEN_ROOT}/examples/moe/data/routing_qwen3_30b_a3b_b64.csv \
             --experts 128 --k 8 --hidden 64 --ffn 24 --tile-b 0 --tile-f 8 -o moe_cli
           $<TARGET_FILE:stepgen> model --arch ${STEPGEN_ROOT}/arch/default.yaml --graph moe_cli/graph.yaml \
             --inputs moe_cli/inputs -o moe_cli/model | grep -q 'off-chip 1140736 B'
           test -f moe_cli/model/y.npy
           if $<TARGET_FILE:stepgen> graph moe --trace ${STEPGEN_ROOT}/examples/moe/data/routing_qwen3_30b_a3b_b64.csv \
             --experts 100 --k 8 -o moe_bad 2> err.txt; then exit 1; fi
           grep -q 'routing_qwen3_30b_a3b_b64.csv' err.txt
           test ! -e moe_bad"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(moe_study_tiling moe_cli_graph_model PROPERTIES LABELS "moe")
