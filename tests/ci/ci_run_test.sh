#!/usr/bin/env bash
# .ci/run's verdicts, with a fake make and a fake df on PATH (.ci/run itself runs unchanged, from a
# copy, so that its CI=true clean-up never touches this checkout):
#   a failing gated lane fails CI; a lane that fails with the disk full, or that has too little
#   disk to start, is reported as unfinished and does not; each lane's build folder is removed
#   when the lane ends; make lint (before make test) and make lint-tidy (after it) gate; make test
#   runs beside scripts/with-cpu-hog, after a make build of its own.
# usage: ci_run_test.sh REPO_ROOT
set -uo pipefail
root="${1:?usage: ci_run_test.sh REPO_ROOT}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0

mkdir -p "$tmp/repo/.ci" "$tmp/repo/scripts" "$tmp/bin"
cp "$root/.ci/run" "$tmp/repo/.ci/run"
cp "$root/scripts/with-cpu-hog" "$tmp/repo/scripts/with-cpu-hog" # make test runs beside it
# make TARGET...: logs its call, leaves a build folder as the real lane would (one that fills the
# disk when the lane is in $FAKE_FILL), and fails when the lane is in $FAKE_FAIL.
cat >"$tmp/bin/make" <<'SH'
#!/usr/bin/env bash
target="$1"
echo "$target" >>"$FAKE_DIR/calls"
case "$target" in
  lint|lint-tidy) dir=. ;;
  build|test) dir=build ;; test-tsan) dir=build-tsan ;; fuzz) dir=build-fuzz ;; test-asan) dir=build-asan ;;
esac
[ "$dir" = . ] || { mkdir -p "$dir" && : >"$dir/object.o"; }
[[ " ${FAKE_FILL:-} " == *" $target "* ]] && : >"$dir/fills-the-disk"
[[ " ${FAKE_FAIL:-} " == *" $target "* ]] && exit 2
exit 0
SH
# df: $FAKE_DIR/free_kb, or 1000 kB while a build folder fills the disk.
cat >"$tmp/bin/df" <<'SH'
#!/bin/sh
free="$(cat "$FAKE_DIR/free_kb")"
ls build*/fills-the-disk >/dev/null 2>&1 && free=1000
echo "Filesystem 1024-blocks Used Available Capacity Mounted on"
echo "fake 268435456 0 $free 0% /"
SH
chmod +x "$tmp/bin/make" "$tmp/bin/df"

# scenario NAME FREE_KB WANT_RC WANT_CALLS WANT_TEXT [VAR=VALUE...]; $want_left: the build folders
# that should remain (none: in CI each goes when its lane ends).
want_left=""
scenario() {
  local name="$1" free_kb="$2" want_rc="$3" want_calls="$4" want_text="$5"
  shift 5
  rm -rf "$tmp/repo/build"* "$tmp/calls"
  echo "$free_kb" >"$tmp/free_kb"
  local out rc calls
  out="$(cd "$tmp/repo" && env PATH="$tmp/bin:$PATH" FAKE_DIR="$tmp" CI=true "$@" bash .ci/run 2>&1)"
  rc=$?
  calls="$(tr '\n' ' ' <"$tmp/calls" | sed 's/ $//')"
  local left; left="$(cd "$tmp/repo" && ls -d build* 2>/dev/null | tr '\n' ' ')"
  if [[ $rc -ne $want_rc || "$calls" != "$want_calls" || "$out" != *"$want_text"* || "$left" != "$want_left" ]]; then
    echo "FAIL $name: exit $rc (want $want_rc); make calls '$calls' (want '$want_calls');" \
         "build folders left: '$left'; output:"
    echo "$out" | sed 's/^/    /'
    echo "    (wanted the text: $want_text)"
    failures=$((failures + 1))
  else
    echo "ok   $name: exit $rc, make $calls"
  fi
}

gib=1048576
scenario "all lanes pass" $((80 * gib)) 0 "lint build test lint-tidy test-tsan fuzz test-asan" "=== ci: done in"
scenario "a gated lane fails" $((80 * gib)) 1 "lint build test lint-tidy test-tsan fuzz test-asan" \
  "HARDENING LANES FAILED: make test-tsan" FAKE_FAIL=test-tsan
scenario "a lane left out of the gate fails" $((80 * gib)) 0 "lint build test lint-tidy test-tsan fuzz test-asan" \
  "LANES WITH FINDINGS, NOT GATING (GPUWISE_CI_GATE_LANES): make test-asan" \
  FAKE_FAIL=test-asan GPUWISE_CI_GATE_LANES="tsan fuzz"
want_left="build " # nothing runs after it
scenario "make test fails" $((80 * gib)) 1 "lint build test" "make test exited 2" FAKE_FAIL=test
scenario "clang-tidy finds something" $((80 * gib)) 1 "lint build test lint-tidy" "make lint-tidy exited 2" \
  FAKE_FAIL=lint-tidy
want_left=""
scenario "the format or the layering is broken" $((80 * gib)) 1 "lint" "make lint exited 2" FAKE_FAIL=lint
want_left=""
scenario "a lane fails with the disk full" $((80 * gib)) 0 "lint build test lint-tidy test-tsan fuzz test-asan" \
  "'make test-tsan' ended with the disk full" FAKE_FAIL=test-tsan FAKE_FILL=test-tsan
scenario "too little disk for the ASan build" $((3 * gib)) 0 "lint build test lint-tidy test-tsan fuzz" \
  "skipping 'make test-asan': 3.0 GiB of disk free (its build needs about 5 GiB)"
scenario "no disk for any lane" $((gib / 2)) 0 "lint build test lint-tidy" \
  "LANES UNFINISHED FOR LACK OF TIME OR DISK (not failed): make test-tsan make fuzz FUZZ_SECONDS=60 make test-asan"
scenario "no time for any lane" $((80 * gib)) 0 "lint build test lint-tidy" \
  "skipping 'make test-asan': " CI_BUDGET_S=1000

echo "ci_run_test: $failures failure(s)"
[[ $failures -eq 0 ]]
