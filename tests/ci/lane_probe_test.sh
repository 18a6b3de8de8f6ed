#!/usr/bin/env bash
# scripts/sanitize and scripts/fuzz probe their compiler before building. A lane whose sanitizer
# runtime is missing is skipped (exit 0, one line); a compiler that cannot build even a plain
# program fails the lane (exit 2, with the compiler's words). CI once read a full disk as two
# missing runtimes and "skipped" both lanes.
# usage: lane_probe_test.sh REPO_ROOT
set -uo pipefail
root="${1:?usage: lane_probe_test.sh REPO_ROOT}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0

# What a compiler on a full disk does: it prints paths, but writes nothing.
cat >"$tmp/full-disk-cxx" <<'SH'
#!/bin/sh
case "$*" in *-print-file-name=*) echo /usr/lib/gcc/x86_64-linux-gnu/12/libasan.so; exit 0 ;; esac
echo "/usr/bin/ld: final link failed: No space left on device" >&2
exit 1
SH
# A working compiler without the sanitizer runtimes.
cat >"$tmp/no-sanitizer-cxx" <<'SH'
#!/bin/sh
case "$*" in
  *-print-file-name=*) echo libasan.so; exit 0 ;;
  *-fsanitize*) echo "/usr/bin/ld: cannot find libasan.so.8: No such file or directory" >&2; exit 1 ;;
esac
out=
while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done
: >"$out"
SH
chmod +x "$tmp"/*-cxx

# expect NAME WANT_RC WANT_TEXT -- COMMAND...
expect() {
  local name="$1" want_rc="$2" want_text="$3"
  shift 4
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  if [[ $rc -ne $want_rc || "$out" != *"$want_text"* ]]; then
    echo "FAIL $name: exit $rc (want $want_rc), output: $out (want: $want_text)"
    failures=$((failures + 1))
  else
    echo "ok   $name: exit $rc: $out"
  fi
}

expect "asan lane, full disk" 2 "No space left on device" -- \
  env SANITIZE_CXX="$tmp/full-disk-cxx" SANITIZE_CC="$tmp/full-disk-cxx" "$root/scripts/sanitize" asan "$tmp/b"
expect "tsan lane, full disk" 2 "tsan lane cannot run" -- \
  env SANITIZE_CXX="$tmp/full-disk-cxx" SANITIZE_CC="$tmp/full-disk-cxx" "$root/scripts/sanitize" tsan "$tmp/b"
expect "asan lane, no runtime" 0 "asan lane skipped" -- \
  env SANITIZE_CXX="$tmp/no-sanitizer-cxx" SANITIZE_CC="$tmp/no-sanitizer-cxx" "$root/scripts/sanitize" asan "$tmp/b"
expect "fuzz, full disk" 2 "No space left on device" -- \
  env FUZZ_CXX="$tmp/full-disk-cxx" FUZZ_CC="$tmp/full-disk-cxx" "$root/scripts/fuzz" "$tmp/b" 1
expect "fuzz, no libFuzzer" 0 "fuzz: skipped" -- \
  env FUZZ_CXX="$tmp/no-sanitizer-cxx" FUZZ_CC="$tmp/no-sanitizer-cxx" "$root/scripts/fuzz" "$tmp/b" 1

[[ -e "$tmp/b" ]] && { echo "FAIL: a probe that stopped the lane still created its build directory"; failures=$((failures + 1)); }
echo "lane_probe_test: $failures failure(s)"
[[ $failures -eq 0 ]]
