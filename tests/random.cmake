# Random STeP graphs (docs/random_graphs.md): 30 seeds through the model and the RTL on
# arch/default.yaml at link FIFO depths 1, 2 and 8 (three fabric builds; with one random
# fabric more at three depths, six builds took the suite from 38 to 83 minutes on 2 cores,
# so most random fabrics are left to the committed 500-seed study). Fails on a seed whose
# outputs are not bit-exact, whose off-chip bytes differ, whose deadlock verdicts differ, or
# whose RTL outputs depend on the FIFO depth; the cycle error is printed.
add_test(NAME e2e_random_graphs COMMAND $<TARGET_FILE:stepgen> study random --seeds 30 --random-archs 0 -o ${CMAKE_BINARY_DIR}/e2e/random)
set_tests_properties(e2e_random_graphs PROPERTIES TIMEOUT 1800 WORKING_DIRECTORY ${STEPGEN_ROOT} FIXTURES_SETUP random_default)
# The steps only random_a4 draws, in RTL: seeds 19 .. 34 on the pool default + random_a4 at
# depth 2 alone (one fabric build more; default's comes from e2e_random_graphs's cache). The
# odd seeds run on random_a4: Scan, sub, scale_rows, matmul_t, Parallelize (Expand only in
# the 500-seed study), two route clusters followed by the combine step (29, beside a feedback
# cycle, and 33) and one stored (25), and graphs in 2 and 3 sections.
add_test(NAME e2e_random_graphs_a4
         COMMAND bash -c "set -euo pipefail; d=${CMAKE_BINARY_DIR}/e2e/random_a4; mkdir -p $d; ln -sfn ../random/build $d/build
           $<TARGET_FILE:stepgen> study random --first 19 --seeds 16 --random-archs 1 --arch-seed 4 --fifo-depths 2 -o $d")
set_tests_properties(e2e_random_graphs_a4 PROPERTIES TIMEOUT 1800 WORKING_DIRECTORY ${STEPGEN_ROOT} FIXTURES_REQUIRED random_default)
# The attention functions in RTL, with FIFO invariance on a random fabric: seeds 1 .. 14 on
# the pool default + random_a2 (4 compute units with sg_cu ATTN = 1, about a minute a build)
# at depths 1, 2 and 8. The odd seeds run on random_a2: recip (1, 7), exp (3), rowmax (7),
# rowsum (11) and Accum(rescale_add) (7, 13).
add_test(NAME e2e_random_graphs_a2
         COMMAND bash -c "set -euo pipefail; d=${CMAKE_BINARY_DIR}/e2e/random_a2; mkdir -p $d; ln -sfn ../random/build $d/build
           $<TARGET_FILE:stepgen> study random --first 1 --seeds 14 --random-archs 1 --arch-seed 2 -o $d")
set_tests_properties(e2e_random_graphs_a2 PROPERTIES TIMEOUT 1800 WORKING_DIRECTORY ${STEPGEN_ROOT} FIXTURES_REQUIRED random_default)
# A Parallelize whose outputs meet again at a Zip (tests/data/graphs/parallelize_reconverge.yaml:
# a tile of B beats passes at link FIFO depth d when B <= 2d), on random_a4: at d = 1 with
# 2-beat tiles model and RTL finish (the model's cycles within 5 %), with 3-beat tiles both
# deadlock and name the stuck streams; at d = 2 with 4-beat tiles both finish. The random
# graph of seed 4 the first was reduced from, where only the model deadlocked, finishes in both.
stepgen_verify_test(e2e_parallelize_reconverge tests/data/arch_random_a4_3mu_fifo1.yaml
                    tests/data/graphs/parallelize_reconverge.yaml --max-cycle-error 5)
set_tests_properties(e2e_parallelize_reconverge PROPERTIES FIXTURES_SETUP random_a4_fifo1)
add_test(NAME e2e_parallelize_reconverge_3beat COMMAND bash ${STEPGEN_ROOT}/tests/rtl/deadlock.sh $<TARGET_FILE:stepgen>
         ${E2E_DIR}/par_reconverge_3beat ${E2E_CACHE} tests/data/arch_random_a4_3mu_fifo1.yaml
         tests/data/graphs/parallelize_reconverge_3beat.yaml s0 load_x --no-buffering)
# ... and with the buffer planBuffers sizes for it (a Parallelize fork: one 3-beat tile on the
# earlier output's path against 2 beats of FIFO), it verifies.
stepgen_verify_test(e2e_parallelize_reconverge_3beat_buffered tests/data/arch_random_a4_3mu_fifo1.yaml
                    tests/data/graphs/parallelize_reconverge_3beat.yaml --max-cycle-error 5)
set_tests_properties(e2e_parallelize_reconverge_3beat_buffered PROPERTIES FIXTURES_REQUIRED random_a4_fifo1)
stepgen_verify_test(e2e_random_s4_parallelize tests/data/arch_random_a4_3mu_fifo1.yaml
                    tests/data/graphs/random_s4_parallelize.yaml --seed 4 --max-cycle-error 5)
set_tests_properties(e2e_parallelize_reconverge_3beat PROPERTIES TIMEOUT 900)
set_tests_properties(e2e_parallelize_reconverge_3beat e2e_random_s4_parallelize PROPERTIES FIXTURES_REQUIRED random_a4_fifo1)
stepgen_verify_test(e2e_parallelize_reconverge_4beat tests/data/arch_random_a4_3mu.yaml
                    tests/data/graphs/parallelize_reconverge_4beat.yaml --max-cycle-error 5)
# The default tier's random graphs: seeds 1 .. 8 on arch/default.yaml at its own FIFO depth
# (2), on the default fabric the e2e tests built (the study uses the arch file itself at its
# own depth, so the build cache holds it): model and RTL verdicts, bit-exact outputs and
# bytes. FIFO invariance needs two depths: the heavy tier's e2e_random_graphs.
add_test(NAME e2e_random_graphs_quick
         COMMAND bash -c "set -euo pipefail; d=${CMAKE_BINARY_DIR}/e2e/random_quick; rm -rf $d; mkdir -p $d ${E2E_CACHE}
           ln -sfn ${E2E_CACHE} $d/build
           $<TARGET_FILE:stepgen> study random --first 1 --seeds 8 --random-archs 0 --fifo-depths 2 -o $d --csv $d/points.csv
           test $(tail -n +2 $d/points.csv | wc -l) -eq 8")
set_tests_properties(e2e_random_graphs_quick PROPERTIES TIMEOUT 900 WORKING_DIRECTORY ${STEPGEN_ROOT} FIXTURES_REQUIRED default_fabric)
