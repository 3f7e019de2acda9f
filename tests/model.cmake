# The timing model against the RTL (generator/model/timing/): a diamond graph (one stream
# broadcast to a streaming path and a buffering path that meet at an add) must finish in
# both, bit-exact, with the model's cycles within 5 % of the RTL's. A lock-step model (no
# link FIFOs) reported a deadlock here.
add_test(NAME e2e_diamond_default
         COMMAND stepgen verify --arch ${STEPGEN_ROOT}/arch/default.yaml --graph ${STEPGEN_ROOT}/tests/data/graphs/diamond.yaml
                 -o ${CMAKE_BINARY_DIR}/e2e/e2e_diamond_default --build-cache ${CMAKE_BINARY_DIR}/fabric-cache
                 --max-cycle-error 5)
set_tests_properties(e2e_diamond_default PROPERTIES TIMEOUT 1200 PASS_REGULAR_EXPRESSION "verdict: PASS"
                     FIXTURES_REQUIRED default_fabric)
