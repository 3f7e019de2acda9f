# End-to-end tests: `stepgen verify` (model + Verilator RTL, outputs bit for bit, byte
# counts) on the default fabric, lint and synthesis of the generated fabric, and bad input
# through the command line. The first verify builds the fabric into a shared cache (one
# Verilog per architecture); the others reuse it.
set(E2E_DIR ${CMAKE_BINARY_DIR}/e2e)
set(E2E_CACHE ${CMAKE_BINARY_DIR}/fabric-cache)

function(stepgen_verify_test name arch graph)
  add_test(NAME ${name}
           COMMAND stepgen verify --arch ${STEPGEN_ROOT}/${arch} --graph ${STEPGEN_ROOT}/${graph}
                   -o ${E2E_DIR}/${name} --build-cache ${E2E_CACHE} ${ARGN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 1200 PASS_REGULAR_EXPRESSION "verdict: PASS")
endfunction()

stepgen_verify_test(e2e_repeat_default arch/default.yaml tests/data/graphs/repeat.yaml)
set_tests_properties(e2e_repeat_default PROPERTIES FIXTURES_SETUP default_fabric)
stepgen_verify_test(e2e_swiglu_default arch/default.yaml examples/swiglu/graph.yaml --inputs ${STEPGEN_ROOT}/examples/swiglu/inputs)
stepgen_verify_test(e2e_buffer_default arch/default.yaml tests/data/graphs/buffer.yaml)
stepgen_verify_test(e2e_shapes_default arch/default.yaml tests/data/graphs/shapes.yaml)
set_tests_properties(e2e_swiglu_default e2e_buffer_default e2e_shapes_default PROPERTIES FIXTURES_REQUIRED default_fabric)
# The small fabric with an FST waveform (a build of its own: tracing is compiled in).
add_test(NAME e2e_trace_small COMMAND bash ${STEPGEN_ROOT}/tests/rtl/trace_small.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/trace ${E2E_CACHE})
set_tests_properties(e2e_trace_small PROPERTIES TIMEOUT 1200)

# Lint (-Wall, no waivers beyond the commented ones in the files) and Yosys synthesis.
add_test(NAME rtl_lint_generated COMMAND bash ${STEPGEN_ROOT}/tests/rtl/lint_generated.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/lint)
set_tests_properties(rtl_lint_generated PROPERTIES TIMEOUT 600)
add_test(NAME rtl_yosys_small COMMAND bash ${STEPGEN_ROOT}/tests/rtl/yosys_small.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/yosys)
set_tests_properties(rtl_yosys_small PROPERTIES TIMEOUT 1500)

# Bad input through the command line: non-zero exit, a located error, no output folder.
add_test(NAME cli_bad_inputs COMMAND bash ${STEPGEN_ROOT}/tests/rtl/cli_bad_inputs.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/bad)
# Determinism of the command's output folder (the library-level test is in test_mapper.cpp).
add_test(NAME cli_determinism COMMAND bash ${STEPGEN_ROOT}/tests/rtl/cli_determinism.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/det)

# A deadlocking graph is reported (model and RTL watchdog), never hangs.
add_test(NAME e2e_deadlock_default COMMAND bash ${STEPGEN_ROOT}/tests/rtl/deadlock.sh $<TARGET_FILE:stepgen> ${E2E_DIR}/deadlock ${E2E_CACHE})
set_tests_properties(e2e_deadlock_default PROPERTIES TIMEOUT 900 FIXTURES_REQUIRED default_fabric)
