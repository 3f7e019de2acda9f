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
# The replay tests run under AddressSanitizer and UBSan, so that a finding that comes back (a
# heap over-read reads no wrong value and would pass uninstrumented) fails them again. The
# loaders the targets reach are compiled a second time, instrumented (about 30 files; the rest
# of the library is not reached).
if(NOT STEPGEN_FUZZ)
  # _GLIBCXX_SANITIZE_VECTOR: a read past a std::vector's size but within its capacity is reported too.
  set(FUZZ_SAN_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -D_GLIBCXX_SANITIZE_VECTOR)
  file(GLOB FUZZ_SAN_SOURCES CONFIGURE_DEPENDS
       ${STEPGEN_ROOT}/generator/support/*.cpp ${STEPGEN_ROOT}/generator/ir/*.cpp ${STEPGEN_ROOT}/generator/passes/*.cpp
       ${STEPGEN_ROOT}/generator/arch/*.cpp ${STEPGEN_ROOT}/generator/bitstream/*.cpp ${STEPGEN_ROOT}/sim/common/npy.cpp)
  add_library(stepgen_fuzz_san STATIC ${FUZZ_SAN_SOURCES})
  set_target_properties(stepgen_fuzz_san PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 10)
  target_compile_options(stepgen_fuzz_san PUBLIC ${FUZZ_SAN_FLAGS} PRIVATE -O0)
  target_link_options(stepgen_fuzz_san PUBLIC ${FUZZ_SAN_FLAGS})
  target_include_directories(stepgen_fuzz_san PUBLIC ${STEPGEN_ROOT}/generator ${STEPGEN_ROOT}/sim ${CMAKE_BINARY_DIR}/gen)
  target_link_libraries(stepgen_fuzz_san PUBLIC yaml-cpp fmt::fmt PkgConfig::Z3 nlohmann_json::nlohmann_json)
  target_compile_definitions(stepgen_fuzz_san PUBLIC STEPGEN_ROOT="${STEPGEN_ROOT}")
endif()
foreach(t ${FUZZ_TARGETS})
  if(STEPGEN_FUZZ)
    add_executable(fuzz_${t} ${FUZZ_DIR}/fuzz_${t}.cpp)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${t} PRIVATE stepgen_core)
  else()
    add_executable(fuzz_${t} ${FUZZ_DIR}/fuzz_${t}.cpp ${FUZZ_DIR}/replay_main.cpp)
    target_link_libraries(fuzz_${t} PRIVATE stepgen_fuzz_san)
    target_compile_options(fuzz_${t} PRIVATE -O0)
    add_test(NAME fuzz_replay_${t} COMMAND fuzz_${t} ${FUZZ_DIR}/corpus/${t} ${FUZZ_SEEDS_${t}})
    # detect_leaks=0: LeakSanitizer needs ptrace, which some containers refuse.
    set_tests_properties(fuzz_replay_${t} PROPERTIES LABELS "fuzz;quick" TIMEOUT 300
                         ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0;UBSAN_OPTIONS=print_stacktrace=1")
  endif()
  # The seeds of `tests/fuzz/run.sh`, one folder or file per line.
  string(REPLACE ";" "\n" seeds "${FUZZ_SEEDS_${t}}")
  file(WRITE ${CMAKE_BINARY_DIR}/fuzz_seeds_${t}.txt "${seeds}\n")
endforeach()
