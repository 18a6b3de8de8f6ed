#!/usr/bin/env bash
# ctest containers_install_test: `cmake --install` into a scratch prefix (what `make install`
# runs) lays out bin/gpuwise, lib/gpuwise/{libgpuwise.so,simdevice/,samples/}, the docs and the
# man page, and the installed gpuwise finds its shim and simulated device relative to itself
# (advisor/cli/locations.cpp): `gpuwise run --simulate` on the installed sample reports kernels.
#   usage: install_test.sh BUILD_DIR
set -euo pipefail
build="$(realpath "$1")"
fail() { echo "install_test: FAILED: $*" >&2; exit 1; }

prefix="$(mktemp -d "${TMPDIR:-/tmp}/gpuwise-install.XXXXXX")"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || { cat "$prefix.log" >&2; fail "cmake --install"; }
rm -f "$prefix.log"
for path in bin/gpuwise lib/gpuwise/libgpuwise.so lib/gpuwise/simdevice/libcudart.so.13 \
            lib/gpuwise/simdevice/libcupti.so.13 lib/gpuwise/simdevice/libgwsim_core.so \
            lib/gpuwise/samples/pageable_copies share/doc/gpuwise/README.md \
            share/doc/gpuwise/metrics.md share/man/man1/gpuwise.1; do
  [[ -e "$prefix/$path" ]] || fail "$path is not installed"
done
[[ ! -e "$prefix/lib/libgpuwise.so" ]] || fail "the shim is installed in lib/, not lib/gpuwise/"

# The man page: roff with a section for each subcommand the CLI lists.
man="$prefix/share/man/man1/gpuwise.1"
grep -q '^\.TH GPUWISE 1' "$man" || fail "gpuwise.1 has no .TH line"
for sub in run report advisor export diff webhook; do
  grep -q "^\.SS gpuwise $sub\$" "$man" || fail "gpuwise.1 has no section for gpuwise $sub"
done
if command -v groff >/dev/null; then
  groff -man -Tutf8 -ww -z "$man" 2>"$prefix/groff.err" || fail "groff rejects gpuwise.1"
  [[ ! -s "$prefix/groff.err" ]] || { cat "$prefix/groff.err" >&2; fail "groff warns on gpuwise.1"; }
fi

# Run from the install, with nothing pointing back at the build tree. In a sanitizer lane
# (cmake/sanitizers.cmake) the runtime is preloaded here, ahead of the shim gpuwise run adds.
sanitizer=()
[[ -z "${GPUWISE_SANITIZER_PRELOAD:-}" ]] || sanitizer=("LD_PRELOAD=$GPUWISE_SANITIZER_PRELOAD")
out="$(cd "$prefix" && env -u GPUWISE_SHIM -u GPUWISE_SIMDEVICE_DIR -u LD_LIBRARY_PATH "${sanitizer[@]}" \
  "$prefix/bin/gpuwise" run --simulate --report-json "$prefix/r.json" -- \
  "$prefix/lib/gpuwise/samples/pageable_copies" 2>&1)" || { echo "$out" >&2; fail "gpuwise run --simulate exited non-zero"; }
if grep -q "shim was not found" <<<"$out"; then echo "$out" >&2; fail "the installed gpuwise did not find its shim"; fi
python3 - "$prefix/r.json" "$prefix" <<'PY' || fail "the installed run's report is wrong"
import json, sys
report = json.load(open(sys.argv[1]))
count = report["summary"]["kernel_count"]
pageable = report.get("copies", {}).get("pageable", {}).get("count", 0)
ids = [r["id"] for r in report.get("recommendations", [])]
print(f"install_test: {count} kernels, {pageable} pageable copies, recommendations {ids}", file=sys.stderr)
# The shim and the simulated device found and working: the sample's kernels and its pageable
# copies recorded. (Which advice ranks first is the rules' tests' business: on a loaded machine the
# host's blocked time can outweigh the copies.)
sys.exit(0 if count > 0 and pageable > 0 else 1)
PY
echo "install_test: passed" >&2
