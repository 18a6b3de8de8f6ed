# Thin wrapper over CMake. The README's quick start is `make demo` and `make test`.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build test demo bench install package clean test-asan test-tsan fuzz gpu-bundle lint lint-tidy

all: build

# DEPS_ARGS: --build-only for the targets that only build (make demo): the test tools come with
# `make test`.
DEPS_ARGS ?=
deps:
	@scripts/install-deps $(DEPS_ARGS)

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The written rules (scripts/lint): clang-format over the tree and the include layering, and no
# function body over 100 lines (scripts/check-function-length); clang-tidy
# on the C++ files changed since the merge-base with origin/main (GPUWISE_LINT_BASE), on this build.
lint: deps
	@scripts/lint format layers
	@scripts/check-function-length

lint-tidy: configure
	@BUILD_DIR=$(BUILD_DIR) scripts/lint tidy

# Only what the demo runs: the CLI, the shim, the simulated device and its one sample (demo_deps in
# CMakeLists.txt), not the test suite; `make test` builds the rest.
DEMO_SAMPLE ?= pageable_copies
demo: DEPS_ARGS = --build-only
demo: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target demo_deps $(DEMO_SAMPLE)
	@GPUWISE_DEMO_SAMPLE=$(DEMO_SAMPLE) scripts/demo $(BUILD_DIR)

bench: build
	@scripts/bench $(BUILD_DIR)

# Install under PREFIX (bin/gpuwise, lib/gpuwise/, share/doc/gpuwise, share/man/man1/gpuwise.1;
# cmake/install.cmake) and the Debian package BUILD_DIR/gpuwise_<version>_<arch>.deb. Both build
# what they install (install_deps), not the tests. DESTDIR is honoured.
PREFIX ?= /usr/local
install package gpu-bundle: DEPS_ARGS = --build-only
install: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target install_deps
	@cmake --install $(BUILD_DIR) --prefix $(PREFIX)

package: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target install_deps
	@cd $(BUILD_DIR) && cpack -G DEB

# What scripts/gpu-check runs, packed to run on a GPU machine without building (docs/gpu-check.md).
gpu-bundle: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target gpuwise_exe gpuwise samples simdevice gwtrain_sim
	@scripts/gpu-bundle $(BUILD_DIR)

# Sanitizer lanes and fuzzers, each in its own build directory; see scripts/sanitize,
# scripts/fuzz and tests/fuzz/README.md. FUZZ_SECONDS: how long each fuzzer runs.
test-asan: deps
	@JOBS=$(JOBS) scripts/sanitize asan build-asan

test-tsan: deps
	@JOBS=$(JOBS) scripts/sanitize tsan build-tsan

FUZZ_SECONDS ?= 60
fuzz: deps
	@JOBS=$(JOBS) scripts/fuzz build-fuzz $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD_DIR)
