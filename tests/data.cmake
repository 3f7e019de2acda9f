# The real input data copied into examples/ is unchanged: SHA-256 sums computed from the
# source files (tests/data_checksums.sh). With ../shared/data beside the project (development
# and CI), the routing traces are also compared with it byte for byte (test_routing_trace.cpp,
# hidden tag [.source], which fails when the source is missing).
add_test(NAME cli_data_checksums COMMAND bash ${STEPGEN_ROOT}/tests/data_checksums.sh)
get_filename_component(STEPGEN_SHARED_DATA ${STEPGEN_ROOT}/../shared/data ABSOLUTE)
if(EXISTS ${STEPGEN_SHARED_DATA}/routing_mixtral8x7b_b64.csv)
  add_test(NAME trace_copies_equal_source COMMAND stepgen_tests "[.source]")
  set_tests_properties(trace_copies_equal_source PROPERTIES LABELS quick
                       ENVIRONMENT STEPGEN_TRACE_SOURCE=${STEPGEN_SHARED_DATA})
endif()
