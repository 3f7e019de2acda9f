# Random STeP graphs (docs/random_graphs.md): 30 seeds through the model and the RTL on
# arch/default.yaml at link FIFO depths 1, 2 and 8 (three fabric builds; with one random
# fabric more, six builds took the suite from 38 to 83 minutes on 2 cores, so the random
# fabrics are left to the committed 500-seed study). Fails on a seed whose outputs are not bit-exact, whose off-chip bytes differ,
# whose deadlock verdicts differ, or whose RTL outputs depend on the FIFO depth; the cycle
# error is printed.
add_test(NAME e2e_random_graphs COMMAND $<TARGET_FILE:stepgen> study random --seeds 30 --random-archs 0 -o ${CMAKE_BINARY_DIR}/e2e/random)
set_tests_properties(e2e_random_graphs PROPERTIES TIMEOUT 1800 WORKING_DIRECTORY ${STEPGEN_ROOT})
