# Project-wide helpers: warnings, sanitizers, and one function to declare a Catch2 test.

set(GPUWISE_WARNINGS -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)

# Sanitizer flags: cmake/sanitizers.cmake (C/C++ only, never nvcc).
include(sanitizers)

# gpuwise_system_library(VAR IMPORTED_TARGET ARCHIVE): sets VAR to a link item that is
# IMPORTED_TARGET (a shared library), except in a target whose GPUWISE_STATIC_SYSTEM_LIBS property is
# true, where it is the static ARCHIVE (libsqlite3.a) when installed. bin/gpuwise sets it: Debian
# links libsqlite3 and libzstd with -z now, so the loader bound their ~1,700 symbols at every start
# of `gpuwise version`, a third of its instructions (docs/performance.md).
function(gpuwise_system_library var imported archive)
  string(MAKE_C_IDENTIFIER "GPUWISE_ARCHIVE_${archive}" cache)
  find_library(${cache} ${archive})
  if(${cache})
    set(${var} "$<IF:$<BOOL:$<TARGET_PROPERTY:GPUWISE_STATIC_SYSTEM_LIBS>>,${${cache}},${imported}>"
        PARENT_SCOPE)
  else()
    set(${var} ${imported} PARENT_SCOPE)
  endif()
endfunction()

# gpuwise_library(NAME SOURCES ... [LIBS ...] [PRIVATE_LIBS ...]): a static, position-independent
# library of ours, so the same objects serve the gpuwise binary, the shim and the tests. LIBS: what
# its headers include (users get it too); PRIVATE_LIBS: what only its sources use (still linked
# into whatever links it, a static library's dependencies being link-only).
function(gpuwise_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${GPUWISE_WARNINGS})
  if(ARG_LIBS)
    target_link_libraries(${name} PUBLIC ${ARG_LIBS})
  endif()
  if(ARG_PRIVATE_LIBS)
    target_link_libraries(${name} PRIVATE ${ARG_PRIVATE_LIBS})
  endif()
endfunction()

# gpuwise_add_test(NAME SOURCES ... [LIBS ...] [LABELS ...] [ENV ...] [SKIP_TAGS ...]): a Catch2
# executable run by CTest from the build directory. LABELS feed `ctest -L` (unit, e2e, gpu, slow ...).
# A test whose input or tool is missing calls skipTest() (tests/skip_test.h), which exits 77: every
# entry counts 77 as Skipped. That exit ends the whole executable, so test cases that can skip while
# others in the file run carry a hidden tag ("[.traces]"), and SKIP_TAGS traces runs them as an entry
# of their own, <name less _test>_traces_test (advisor_metrics_test, promtool: advisor_metrics_promtool_test).
# The real traces the trace tests read (tests/traces_dir.h): ../shared/traces beside the checkout by
# default; where the folder is absent they read the subset in tests/data/traces.
set(GPUWISE_TRACES_DIR "${PROJECT_SOURCE_DIR}/../shared/traces" CACHE PATH
  "Folder of real GPU traces (kineto/, nsys/) for the trace tests")

function(gpuwise_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS;ENV;SKIP_TAGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # A test file's own code is fixtures and assertions, compiled at -O0: Catch2's and nlohmann/json's
  # templates made each one cost 24-27 CPU-seconds at -O2 and 36-39 in the ASan lane, about half
  # that at -O0. The code under test is in the libraries, built with the build's own flags.
  target_compile_options(${name} PRIVATE ${GPUWISE_WARNINGS} -O0)
  target_link_libraries(${name} PRIVATE gpuwise_catch_main ${ARG_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  string(REGEX REPLACE "_test$" "" base ${name})
  set(entries ${name})
  add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
  foreach(tag ${ARG_SKIP_TAGS})
    add_test(NAME ${base}_${tag}_test COMMAND ${name} "[${tag}]" WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
    list(APPEND entries ${base}_${tag}_test)
    # A target of the entry's name, so that building "the target of each test" (the TSan lane
    # builds its tests by their CTest names) builds the executable the entry runs.
    add_custom_target(${base}_${tag}_test)
    add_dependencies(${base}_${tag}_test ${name})
  endforeach()
  foreach(entry ${entries})
    set_tests_properties(${entry} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
      SKIP_RETURN_CODE 77
      ENVIRONMENT "GPUWISE_BUILD_DIR=${CMAKE_BINARY_DIR};GPUWISE_SOURCE_DIR=${PROJECT_SOURCE_DIR};GPUWISE_TRACES_DIR=${GPUWISE_TRACES_DIR};${ARG_ENV}")
    gpuwise_sanitizer_env(${entry})
  endforeach()
endfunction()
