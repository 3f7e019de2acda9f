# Golden diagnostics (tests/diag/README.md): every bad input of tests/diag/cases.txt gives its
# expected `file:line:col: error[ID]: message`, a non-zero exit and no output folder; at least
# 60 distinct ids across arch, graph, traces, tensors, bitstreams and the command line.
add_test(NAME cli_diag_golden COMMAND bash ${STEPGEN_ROOT}/tests/diag/check.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/diag)
set_tests_properties(cli_diag_golden PROPERTIES FAIL_REGULAR_EXPRESSION "FAIL|, [0-5]?[0-9] distinct ids")
