# RTL check of the fp32 package: rtl_templates/sg_fp_pkg.sv + sg_sigmoid_lut.sv, verilated in
# the wrapper tests/rtl/sg_fp_check.sv, must match sim/common/fp.cpp bit for bit.
# fp.cpp is compiled into the test directly (it needs nothing else), so this test builds
# even while other parts of stepgen_core do not.
add_executable(test_rtl_fp
  ${STEPGEN_ROOT}/tests/rtl/test_rtl_fp.cpp
  ${STEPGEN_ROOT}/sim/common/fp.cpp)
target_include_directories(test_rtl_fp PRIVATE ${STEPGEN_ROOT}/sim)
# Verilator's runtime headers as system headers: keeps the project's -Wall -Wextra quiet
# about them (GCC ignores the -I that verilate() adds for the same directories).
target_include_directories(test_rtl_fp SYSTEM PRIVATE ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
target_link_libraries(test_rtl_fp PRIVATE Catch2::Catch2WithMain)
# -Wall with warnings fatal (Verilator's default): the .sv files must stay lint clean.
verilate(test_rtl_fp
  PREFIX Vsg_fp_check
  TOP_MODULE sg_fp_check
  SOURCES ${STEPGEN_ROOT}/rtl_templates/sg_sigmoid_lut.sv
          ${STEPGEN_ROOT}/rtl_templates/sg_fp_pkg.sv
          ${STEPGEN_ROOT}/tests/rtl/sg_fp_check.sv
  VERILATOR_ARGS -O3 --x-assign fast --x-initial fast -Wall)
# The Verilator runtime (verilated.cpp, verilated_threads.cpp) includes its headers with
# quotes, so -isystem does not cover it; silence the one -Wextra warning it triggers
# (verilated_types.h: unused parameter). Source properties are per directory, so this
# applies to every verilated target here, which only ever helps.
set_source_files_properties(${VERILATOR_ROOT}/include/verilated.cpp
                            ${VERILATOR_ROOT}/include/verilated_threads.cpp
                            PROPERTIES COMPILE_OPTIONS -Wno-unused-parameter)
add_test(NAME rtl_fp COMMAND test_rtl_fp)
