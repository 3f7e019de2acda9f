# Verilator harness tests (sim/harness/, flows/verilator_build.sh), independent of the
# generator: a hand-written fake fabric is built with the harness and run end to end.

# Port accessors for Verilator types (needs the Verilator headers, so not in stepgen_tests).
add_executable(stepgen_vport_tests ${CMAKE_CURRENT_LIST_DIR}/rtl/test_vport.cpp)
target_include_directories(stepgen_vport_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../sim)
target_include_directories(stepgen_vport_tests SYSTEM PRIVATE
  "${VERILATOR_ROOT}/include" "${VERILATOR_ROOT}/include/vltstd")
target_link_libraries(stepgen_vport_tests PRIVATE Catch2::Catch2WithMain)
catch_discover_tests(stepgen_vport_tests DISCOVERY_TIMEOUT 30 PROPERTIES LABELS quick)

# Lint of the fake fabric.
add_test(NAME rtl_fake_fabric_lint
         COMMAND verilator --lint-only -Wall ${CMAKE_CURRENT_LIST_DIR}/rtl/fake_fabric.sv)

# Build (flows/verilator_build.sh), then run ok / deadlock / timeout / error / big / trace cases.
add_test(NAME rtl_harness_fake_fabric
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/rtl/run_fake_fabric.sh ${CMAKE_BINARY_DIR}/rtl_harness_fake)
set_tests_properties(rtl_harness_fake_fabric PROPERTIES TIMEOUT 900)
