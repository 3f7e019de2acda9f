# Golden text dumps (tests/golden/README.md): the fabric top and the bitstream listing of one
# graph per shipped architecture, compared with the committed copies (a diff when they
# differ). STEPGEN_REGEN_GOLDEN=1 rewrites them instead and the test reports skipped (exit 77).
foreach(a default step_validation moe)
  add_test(NAME golden_${a}
           COMMAND bash ${STEPGEN_ROOT}/tests/golden/check.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/golden ${a})
  set_tests_properties(golden_${a} PROPERTIES LABELS "golden;quick" TIMEOUT 300 SKIP_RETURN_CODE 77)
endforeach()
