# Sanitizer and fuzzing builds. Two cache settings, both off by default:
#
#   -DGPUWISE_SANITIZE=address,undefined   ASan + UBSan on every host C/C++ target (the CI lane
#   -DGPUWISE_SANITIZE=thread              TSan, for `ctest -L concurrency`      uses gcc for both)
#   -DGPUWISE_FUZZ=ON                      clang only: every host target gets libFuzzer's coverage
#                                          (-fsanitize=fuzzer-no-link) plus ASan + UBSan, and the
#                                          tests/fuzz targets link libFuzzer's main.
#
# Only C and C++ are instrumented. nvcc-built code (samples/, the .cu test programs) stays as it is:
# nvcc hands host code to its own host compiler with flags we do not control, and instrumenting a
# sample buys nothing, since the code under test is ours, not the sample's. Those programs still
# run our sanitized libraries (libgpuwise.so by LD_PRELOAD, the simulated libcudart/libcupti), so
# with ASan every test gets the runtime preloaded first (gpuwise_sanitizer_env below): gcc links
# libasan dynamically, so the preloaded copy is the very one the sanitized executables use. That
# is why the lanes use gcc: clang links its ASan runtime statically into executables, and a second
# runtime in a preloaded library would conflict.
#
# UBSan does not recover (-fno-sanitize-recover=all): a finding fails the test instead of
# scrolling past in its output.

set(GPUWISE_SANITIZE_FLAGS "")
if(GPUWISE_SANITIZE)
  list(APPEND GPUWISE_SANITIZE_FLAGS -fsanitize=${GPUWISE_SANITIZE} -fno-omit-frame-pointer)
  if(GPUWISE_SANITIZE MATCHES "undefined")
    list(APPEND GPUWISE_SANITIZE_FLAGS -fno-sanitize-recover=all)
  endif()
endif()

option(GPUWISE_FUZZ "Build the libFuzzer targets in tests/fuzz (clang)" OFF)
if(GPUWISE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GPUWISE_FUZZ needs clang (libFuzzer): configure with -DCMAKE_C_COMPILER=clang "
                        "-DCMAKE_CXX_COMPILER=clang++ (scripts/install-deps installs it)")
  endif()
  if(GPUWISE_SANITIZE)
    message(FATAL_ERROR "GPUWISE_FUZZ brings its own sanitizers (address,undefined); leave GPUWISE_SANITIZE empty")
  endif()
  set(GPUWISE_SANITIZE "address,undefined")
  # vptr needs RTTI of every polymorphic type in the process, including those from uninstrumented
  # system libraries; function is a clang-only check of indirect calls through C casts. Both give
  # findings about code that is not ours, so they are off; every other UBSan check is on.
  set(GPUWISE_SANITIZE_FLAGS -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr,function
                             -fno-sanitize-recover=all -fno-omit-frame-pointer)
endif()

if(GPUWISE_SANITIZE_FLAGS)
  message(STATUS "gpuwise: sanitizers on C/C++ code: ${GPUWISE_SANITIZE_FLAGS}")
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${GPUWISE_SANITIZE_FLAGS}>")
  # libFuzzer's coverage runtime is linked only into the fuzz targets (-fsanitize=fuzzer there).
  set(_gpuwise_link_flags ${GPUWISE_SANITIZE_FLAGS})
  list(REMOVE_ITEM _gpuwise_link_flags -fsanitize=fuzzer-no-link,address,undefined)
  if(GPUWISE_FUZZ)
    list(APPEND _gpuwise_link_flags -fsanitize=address,undefined)
  endif()
  add_link_options("$<$<LINK_LANGUAGE:C,CXX>:${_gpuwise_link_flags}>")
endif()

# The runtime library a process needs preloaded when an uninstrumented executable (an nvcc sample,
# python, a shell) loads one of our sanitized libraries. Empty when none is needed.
set(GPUWISE_SANITIZER_PRELOAD "")
if(GPUWISE_SANITIZE AND NOT GPUWISE_FUZZ)
  if(GPUWISE_SANITIZE MATCHES "address")
    set(_gpuwise_rt libasan.so)
  elseif(GPUWISE_SANITIZE MATCHES "thread")
    set(_gpuwise_rt libtsan.so)
  endif()
  if(_gpuwise_rt)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${_gpuwise_rt}
                    OUTPUT_VARIABLE _gpuwise_rt_path OUTPUT_STRIP_TRAILING_WHITESPACE)
    # The compiler prints the bare name back when it has no such runtime.
    if(IS_ABSOLUTE "${_gpuwise_rt_path}" AND EXISTS "${_gpuwise_rt_path}")
      get_filename_component(GPUWISE_SANITIZER_PRELOAD "${_gpuwise_rt_path}" REALPATH)
    else()
      message(FATAL_ERROR "GPUWISE_SANITIZE=${GPUWISE_SANITIZE}: ${CMAKE_CXX_COMPILER} has no ${_gpuwise_rt} "
                          "(install the gcc sanitizer runtimes: scripts/install-deps)")
    endif()
  endif()
endif()

# Options every sanitized test runs with. ASan: the runtime is preloaded (ahead of a sanitized
# executable's own reference to it, which is fine: it is the same copy); leaks are checked
# everywhere, with the suppressions in tests/fuzz/sanitizer/lsan.supp for programs we do not build
# (bash, python) and the shim's intentional leaks. UBSan: print where, and stop. TSan: the shim and
# the fork tests start threads in a fork()ed child of a threaded parent, which TSan refuses by
# default (die_after_fork); the tests wait with deadlines, so a hang there still fails. TSan
# ignores what uninstrumented libraries (libzmq, the nvcc-built samples) do through its
# interceptors (ignore_noninstrumented_modules): libzmq's memcpy of every message otherwise looks
# like a race, and matching each against the suppressions made e2e_security_test's 10000 hostile
# messages take over 5 minutes.
# Tests that start children with an environment of their own pass GPUWISE_SANITIZER_PRELOAD and
# the *SAN_OPTIONS on (tests/interposer/process_test.cpp).
# intercept_tls_get_addr=0: gcc 12's runtime takes a dynamic TLS block whose start lies
# sizeof(Glibc_2_19_tls_header) past a page boundary for a glibc 2.19 block, reads a bogus range
# from the words before it, and LeakSanitizer's tracer dies scanning it at exit ("Tracer caught
# signal 11", exit 1, no leak named). Where a block lands is chance: since the shim subscribes
# with cuptiSubscribe_v2, the real libcupti in an nvcc-built test program under LD_DEBUG hits it
# every time. Fixed upstream after gcc 13 / LLVM 16. The cost: a heap block that only dynamic TLS
# points to would be reported as a leak (none is, in the whole ASan lane).
set(GPUWISE_SANITIZER_ENV "")
if(GPUWISE_SANITIZE MATCHES "address")
  list(APPEND GPUWISE_SANITIZER_ENV
    "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=1:abort_on_error=0:halt_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:intercept_tls_get_addr=0"
    "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/fuzz/sanitizer/lsan.supp:print_suppressions=0")
endif()
if(GPUWISE_SANITIZE MATCHES "undefined")
  list(APPEND GPUWISE_SANITIZER_ENV "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
endif()
if(GPUWISE_SANITIZE MATCHES "thread")
  list(APPEND GPUWISE_SANITIZER_ENV
    "TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:die_after_fork=0:ignore_noninstrumented_modules=1:suppressions=${PROJECT_SOURCE_DIR}/tests/fuzz/sanitizer/tsan.supp")
endif()

# clang's fuzz build links its runtime statically: nothing to preload there.
# GWTRAIN_WORKER_START=spawn: train.py's loader workers start as fresh processes instead of forks
# of the trainer. Neither gcc 12 runtime is fork-safe in a multithreaded process (forkChildren-
# Checkable() in tests/sanitizer_env.h): a forked worker blocked in ASan's allocator lock starved
# its rank, and the other ranks timed out in their first all-reduce (CI, 2026-12-03). The normal
# lane forks, as DataLoader does.
if(GPUWISE_SANITIZER_PRELOAD)
  list(APPEND GPUWISE_SANITIZER_ENV "LD_PRELOAD=${GPUWISE_SANITIZER_PRELOAD}"
                                    "GPUWISE_SANITIZER_PRELOAD=${GPUWISE_SANITIZER_PRELOAD}"
                                    "GWTRAIN_WORKER_START=spawn")
endif()

# gpuwise_sanitizer_env(TEST): adds GPUWISE_SANITIZER_ENV to a test's environment; gpuwise_add_test
# calls it for every test, so the areas' own CMakeLists need not know about sanitizers.
function(gpuwise_sanitizer_env test)
  if(GPUWISE_SANITIZER_ENV)
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT ${GPUWISE_SANITIZER_ENV})
  endif()
endfunction()
