# Studies as job lists (generator/jobs/, docs/cluster.md) through the local backend: a study
# killed in one job, resumed and merged equals the serial study (model only, about 15 s), and
# RTL points run as concurrent jobs on one fabric build cache (arch/default.yaml's, shared
# with the e2e tests and locked per fabric) merge to the serial study's CSV.
add_test(NAME jobs_kill_resume
         COMMAND bash ${STEPGEN_ROOT}/tests/jobs/kill_resume.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/jobs/kill_resume)
add_test(NAME jobs_rtl_points
         COMMAND bash ${STEPGEN_ROOT}/tests/jobs/rtl_points.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/jobs/rtl_points
                 ${CMAKE_BINARY_DIR}/fabric-cache)
# Timing-only points (study tiling-full at true dimensions, 2 points, about 10 s).
add_test(NAME jobs_timing_points
         COMMAND bash ${STEPGEN_ROOT}/tests/jobs/timing_points.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/jobs/timing_points)
set_tests_properties(jobs_kill_resume jobs_rtl_points jobs_timing_points PROPERTIES WORKING_DIRECTORY ${STEPGEN_ROOT} TIMEOUT 900)
# The tiling study's 30 RTL points (arch/moe.yaml at 3 FIFO depths) merged equal to the serial
# study (tests/jobs/tiling_rtl.sh; heavy: the serial study and the jobs, a few minutes each).
add_test(NAME jobs_tiling_rtl COMMAND bash ${STEPGEN_ROOT}/tests/jobs/tiling_rtl.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/jobs/tiling_rtl)
set_tests_properties(jobs_tiling_rtl PROPERTIES WORKING_DIRECTORY ${STEPGEN_ROOT} TIMEOUT 2400)
# The Slurm backend on a real single-node Slurm (scripts/slurm_local.sh, Debian's packages):
# 6 RTL points and 2 builds as job arrays, one build cancelled while it runs, resumed, merged
# equal to the serial study (about 70 s; heavy: it starts daemons on fixed ports, alone).
add_test(NAME jobs_slurm COMMAND bash ${STEPGEN_ROOT}/tests/jobs/slurm.sh $<TARGET_FILE:stepgen> ${CMAKE_BINARY_DIR}/jobs/slurm)
set_tests_properties(jobs_slurm PROPERTIES WORKING_DIRECTORY ${STEPGEN_ROOT} TIMEOUT 1200 RUN_SERIAL TRUE)
