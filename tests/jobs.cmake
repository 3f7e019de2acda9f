# Studies as job lists (generator/jobs/, docs/cluster.md) through the local backend: a study
# killed in one job, resumed and merged equals the serial study (model only, about 15 s), and
# RTL points run as concurrent jobs on one fabric build cache (arch/default.yaml's, shared
# with the e2e tests and locked per fabric) merge to the serial study's CSV.
add_test(NAME jobs_kill_resume
         COMMAND bash ${STEPGEN_ROOT}/tests/jobs/kill_resume.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/jobs/kill_resume)
add_test(NAME jobs_rtl_points
         COMMAND bash ${STEPGEN_ROOT}/tests/jobs/rtl_points.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/jobs/rtl_points
                 ${CMAKE_BINARY_DIR}/fabric-cache)
set_tests_properties(jobs_kill_resume jobs_rtl_points PROPERTIES WORKING_DIRECTORY ${STEPGEN_ROOT} TIMEOUT 900)
