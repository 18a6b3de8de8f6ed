#!/usr/bin/env bash
# scripts/lint's checks, each on a planted violation in a temporary tree: the check exits 1 and
# names the file, and exits 0 once the violation is gone.
#   format  a badly formatted file in a small git repo with the project's .clang-format
#   layers  the project's own tracked sources (which must pass as they are), then a profiler file
#           including an advisor header and a transport file including an interposer header
#   tidy    a file breaking .clang-tidy's naming rule, found as a change since the base commit,
#           with a hand-written compile_commands.json
# A check whose tool is missing exits 77 (Skipped).
# usage: lint_test.sh REPO_ROOT format|layers|tidy
set -uo pipefail
root="${1:?usage: lint_test.sh REPO_ROOT format|layers|tidy}"
check="${2:?usage: lint_test.sh REPO_ROOT format|layers|tidy}"
lint="$root/scripts/lint"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0

# expect NAME WANT_RC WANT_TEXT: runs scripts/lint $check on $tmp/tree.
expect() {
  local name="$1" want_rc="$2" want_text="$3" out rc
  out="$(GPUWISE_LINT_ROOT="$tmp/tree" "$lint" "$check" 2>&1)"
  rc=$?
  if [[ $rc -ne $want_rc || "$out" != *"$want_text"* ]]; then
    echo "FAIL $name: exit $rc (want $want_rc), wanted the text: $want_text; output:"
    echo "$out" | sed 's/^/    /'
    failures=$((failures + 1))
  else
    echo "ok   $name: exit $rc"
  fi
}

new_repo() {
  mkdir -p "$tmp/tree" && git -C "$tmp/tree" init -q &&
    git -C "$tmp/tree" config user.email lint@test && git -C "$tmp/tree" config user.name lint
}

tool_or_skip() {
  command -v "$1-14" >/dev/null || command -v "$1" >/dev/null || { echo "no $1: skipped"; exit 77; }
}

case "$check" in
format)
  tool_or_skip clang-format
  new_repo
  cp "$root/.clang-format" "$tmp/tree/"
  mkdir -p "$tmp/tree/profiler"
  printf 'int  twice( int x ){return x*2;}\n' >"$tmp/tree/profiler/planted.cpp"
  git -C "$tmp/tree" add -A
  expect "a badly formatted file" 1 "profiler/planted.cpp: not clang-formatted"
  printf 'int twice(int x) {\n  return x * 2;\n}\n' >"$tmp/tree/profiler/planted.cpp"
  expect "the same file formatted" 0 "0 of 1 files differ"
  ;;
layers)
  new_repo
  (cd "$root" && git ls-files -z | grep -zE '\.(c|cc|cpp|h|hpp|cu|cuh|md)$' |
    tar --null -T - -cf - | tar -xf - -C "$tmp/tree") || exit 2
  git -C "$tmp/tree" add -A
  expect "the project's sources" 0 "0 include(s) crossing"
  victim="profiler/model/events.h"
  cp "$tmp/tree/$victim" "$tmp/events.h.orig"
  sed -i '0,/^#include/s//#include "advisor\/analysis\/format.h"\n&/' "$tmp/tree/$victim"
  line="$(grep -n '"advisor/analysis/format.h"' "$tmp/tree/$victim" | cut -d: -f1)"
  expect "profiler including advisor" 1 "$victim:$line: includes \"advisor/analysis/format.h\": files under profiler/model/"
  cp "$tmp/events.h.orig" "$tmp/tree/$victim"
  victim="transport/gwt_file.cpp"
  printf '#include "interposer/log.h"\n' >>"$tmp/tree/$victim"
  expect "transport including interposer" 1 "$victim:$(wc -l <"$tmp/tree/$victim"): includes \"interposer/log.h\": files under transport/"
  sed -i '$d' "$tmp/tree/$victim"
  printf '#include <zmq.h>\n' >>"$tmp/tree/profiler/model/events.h"
  expect "ZeroMQ outside transport/zmq" 1 "includes zmq.h: transport/README.md: ZeroMQ under zmq/ only"
  sed -i '$d' "$tmp/tree/profiler/model/events.h"
  expect "violations removed" 0 "0 include(s) crossing"
  ;;
tidy)
  tool_or_skip clang-tidy
  new_repo
  cp "$root/.clang-tidy" "$tmp/tree/"
  mkdir -p "$tmp/tree/profiler" "$tmp/tree/build"
  printf 'int twice(int x) { return x * 2; }\n' >"$tmp/tree/profiler/clean.cpp"
  git -C "$tmp/tree" add -A && git -C "$tmp/tree" commit -qm base
  printf 'class planted_name {\npublic:\n  int value = 0;\n};\n' >"$tmp/tree/profiler/planted.cpp"
  git -C "$tmp/tree" add -A
  cat >"$tmp/tree/build/compile_commands.json" <<JSON
[
  {"directory": "$tmp/tree", "file": "$tmp/tree/profiler/clean.cpp", "command": "c++ -std=c++20 -c profiler/clean.cpp"},
  {"directory": "$tmp/tree", "file": "$tmp/tree/profiler/planted.cpp", "command": "c++ -std=c++20 -c profiler/planted.cpp"}
]
JSON
  export GPUWISE_LINT_BASE=HEAD
  expect "a class named against .clang-tidy" 1 "readability-identifier-naming"
  printf 'class PlantedName {\npublic:\n  int value = 0;\n};\n' >"$tmp/tree/profiler/planted.cpp"
  expect "the class renamed" 0 "1 file(s) changed since HEAD, 0 with findings"
  ;;
*)
  echo "usage: lint_test.sh REPO_ROOT format|layers|tidy" >&2
  exit 2
  ;;
esac

echo "lint_test $check: $failures failure(s)"
[[ $failures -eq 0 ]]
