# The studies in the STeP paper's setting (`study regions --paper`): the figure of merit the
# markdown states, recomputed from the CSV (about 2 minutes: heavy).
add_test(NAME study_regions_paper
         COMMAND bash ${STEPGEN_ROOT}/tests/studies/regions_paper.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/studies/regions_paper)
set_tests_properties(study_regions_paper PROPERTIES WORKING_DIRECTORY ${STEPGEN_ROOT} TIMEOUT 900)
