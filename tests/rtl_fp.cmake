# RTL check of the fp32 package: rtl_templates/sg_fp_pkg.sv + the sigmoid table (the emitter's
# sg_sigmoid_lut.sv, golden copy tests/rtl/sg_sigmoid_lut.sv), verilated in the wrapper
# tests/rtl/sg_fp_check.sv, must match sim/common/fp.cpp bit for bit.
include(${STEPGEN_ROOT}/tests/rtl/sg_rtl.cmake)

sg_rtl_test(test_rtl_fp ${STEPGEN_ROOT}/sim/common/fp.cpp)
# -Wall with warnings fatal (Verilator's default): the .sv files must stay lint clean.
sg_rtl_verilate(test_rtl_fp Vsg_fp_check sg_fp_check "" ${SG_FP_DEPS} ${STEPGEN_ROOT}/tests/rtl/sg_fp_check.sv)
# The Verilator runtime (verilated.cpp, verilated_threads.cpp) includes its headers with
# quotes, so -isystem does not cover it; silence the one -Wextra warning it triggers
# (verilated_types.h: unused parameter). Source properties are per directory, so this
# applies to every verilated target here, which only ever helps.
set_source_files_properties(${VERILATOR_ROOT}/include/verilated.cpp
                            ${VERILATOR_ROOT}/include/verilated_threads.cpp
                            PROPERTIES COMPILE_OPTIONS -Wno-unused-parameter)
add_test(NAME rtl_fp COMMAND test_rtl "[fp]")
# rsqrt's RTL against fp32Rsqrt for every significand at both exponent parities (16.7 M
# vectors; the default tier's rtl_fp takes two in 16).
add_test(NAME rtl_fp_full COMMAND test_rtl "[fp_full]")
set_tests_properties(rtl_fp_full PROPERTIES LABELS "rtl;heavy" TIMEOUT 600)
