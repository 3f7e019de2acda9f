# The fuzz targets (docs/fuzzing.md). Each target's inputs: the shipped files of its format
# (seeds) and tests/fuzz/corpus/<target>/ (inputs the fuzzer found, each once a crash, a hang
# or a runaway allocation, kept so it stays fixed; and seeds no shipped file gives).
set(FUZZ_DIR ${STEPGEN_ROOT}/tests/fuzz)
set(FUZZ_SEEDS_arch ${STEPGEN_ROOT}/arch ${STEPGEN_ROOT}/tests/data ${STEPGEN_ROOT}/tests/data/bad)
set(FUZZ_SEEDS_graph ${STEPGEN_ROOT}/examples/swiglu/graph.yaml ${STEPGEN_ROOT}/examples/attention/graph.yaml
    ${STEPGEN_ROOT}/tests/data/graphs ${STEPGEN_ROOT}/tests/data/bad)
set(FUZZ_SEEDS_trace ${STEPGEN_ROOT}/examples/moe/data)
set(FUZZ_SEEDS_kv ${STEPGEN_ROOT}/examples/attention/data)
set(FUZZ_SEEDS_npy ${STEPGEN_ROOT}/examples/swiglu/inputs)
set(FUZZ_SEEDS_bitstream "")
set(FUZZ_TARGETS arch graph trace kv npy bitstream)
foreach(t ${FUZZ_TARGETS})
  if(STEPGEN_FUZZ)
    add_executable(fuzz_${t} ${FUZZ_DIR}/fuzz_${t}.cpp)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer,address,undefined)
  else()
    add_executable(fuzz_${t} ${FUZZ_DIR}/fuzz_${t}.cpp ${FUZZ_DIR}/replay_main.cpp)
    add_test(NAME fuzz_replay_${t} COMMAND fuzz_${t} ${FUZZ_DIR}/corpus/${t} ${FUZZ_SEEDS_${t}})
    set_tests_properties(fuzz_replay_${t} PROPERTIES LABELS "fuzz;quick" TIMEOUT 300)
  endif()
  target_link_libraries(fuzz_${t} PRIVATE stepgen_core)
  # The seeds of `tests/fuzz/run.sh`, one folder or file per line.
  string(REPLACE ";" "\n" seeds "${FUZZ_SEEDS_${t}}")
  file(WRITE ${CMAKE_BINARY_DIR}/fuzz_seeds_${t}.txt "${seeds}\n")
endforeach()
