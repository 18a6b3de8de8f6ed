#!/usr/bin/env bash
# Integration test (ctest: containers_package_test, label integration): the Debian package
# (`make package`, cmake/install.cmake) installed into a clean Debian 12 (bookworm) root with
# `apt-get install ./gpuwise_*.deb`, so its dependencies resolve from the Debian mirror, and its
# gpuwise run there: `gpuwise version`, `gpuwise report` on a real trace, and
# `gpuwise run --simulate` on the installed sample (the report JSON must have kernels).
#
# The pristine minbase root is made once with debootstrap and cached (GPUWISE_BOOKWORM_ROOT, default
# ~/.cache/gpuwise/bookworm-root); each run installs into a fresh copy of it, and the downloaded
# .debs are kept beside it, so a rerun needs neither debootstrap nor (much) network.
# Exit 77 (Skipped) where it cannot run: not root, no debootstrap/unshare/chroot, or no network for
# the first debootstrap or the dependencies.
#   usage: package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$(realpath "$1")"
src="$(realpath "$2")"
mirror="${GPUWISE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
cache="${GPUWISE_BOOKWORM_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuwise/bookworm-root}"

log() { echo "package_test: $*" >&2; }
skip() { echo "package_test: SKIPPED: $*" >&2; exit 77; }
fail() { echo "package_test: FAILED: $*" >&2; exit 1; }

[[ "$(id -u)" == 0 ]] || skip "debootstrap and chroot need root"
for tool in debootstrap unshare chroot cpack dpkg-deb; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps installs debootstrap)"
done

# ---- the package -------------------------------------------------------------------------------
log "building the package (cpack -G DEB in $build)"
rm -f "$build"/gpuwise_*.deb
(cd "$build" && cpack -G DEB >"$build/package_test.cpack.log" 2>&1) ||
  fail "cpack failed (see $build/package_test.cpack.log)"
debs=("$build"/gpuwise_*.deb)
[[ -f "${debs[0]}" ]] || fail "cpack made no gpuwise_*.deb in $build"
deb="${debs[0]}"
log "$(basename "$deb"): $(du -h "$deb" | cut -f1); Depends: $(dpkg-deb -f "$deb" Depends)"
depends="$(dpkg-deb -f "$deb" Depends)"
# (No libsqlite3-0: bin/gpuwise links SQLite statically, its start-up binds fewer symbols;
# cmake/gpuwise.cmake, gpuwise_system_library.)
for lib in libzmq5 libssl3 libzstd1 libc6; do
  grep -q "\b$lib\b" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
contents="$(dpkg-deb -c "$deb")"
for path in ./usr/bin/gpuwise ./usr/lib/gpuwise/libgpuwise.so ./usr/lib/gpuwise/simdevice/libcudart.so.13 \
            ./usr/lib/gpuwise/samples/pageable_copies ./usr/share/man/man1/gpuwise.1 \
            ./usr/share/doc/gpuwise/README.md; do
  grep -q " $path\( \|$\)" <<<"$contents" || fail "the package lacks $path"
done

# ---- the clean bookworm root, made once --------------------------------------------------------
marker="$cache/.gpuwise-root"
if [[ ! -f "$marker" ]]; then
  log "debootstrap bookworm into $cache (once; a few minutes)"
  mkdir -p "$(dirname "$cache")"
  rm -rf "$cache" "$cache.tmp"
  if ! debootstrap --variant=minbase bookworm "$cache.tmp" "$mirror" >"$cache.log" 2>&1; then
    if grep -qiE "resolv|connect|Failed getting release|couldn't download|network" "$cache.log"; then
      rm -rf "$cache.tmp"
      skip "debootstrap could not download bookworm from $mirror (see $cache.log)"
    fi
    fail "debootstrap failed (see $cache.log)"
  fi
  mv "$cache.tmp" "$cache"
  echo "bookworm minbase" >"$marker"
fi

# ---- a fresh copy of it, the package installed there -------------------------------------------
work="$build/package_test"
root="$work/root"
rm -rf "$work"
mkdir -p "$work" "$(dirname "$cache")/bookworm-apt-archives/partial"
cp -a "$cache" "$root"
cp -f /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/tmp/gpuwise-test"
cp "$deb" "$root/tmp/gpuwise-test/"
trace="$src/tests/data/traces/kineto/hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz"
[[ -f "$trace" ]] || fail "no trace at $trace"
cp "$trace" "$root/tmp/gpuwise-test/trace.json.gz"

# in_root COMMAND: COMMAND (a shell line) chrooted in the root, in a private mount namespace with
# /proc, /dev and the shared apt archive cache bound; the mounts vanish with the namespace.
in_root() {
  # shellcheck disable=SC2016 # expanded by the inner shell
  unshare -m -- /bin/sh -c '
    root="$1" archives="$2"; shift 2
    mount --make-rprivate / 2>/dev/null || true
    mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" &&
      mount --bind "$archives" "$root/var/cache/apt/archives" || exit 70
    exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C \
      DEBIAN_FRONTEND=noninteractive /bin/sh -c "$1"
  ' in_root "$root" "$(dirname "$cache")/bookworm-apt-archives" "$1"
}

in_root true || skip "chroot into $root does not work here (needs CAP_SYS_ADMIN and CAP_SYS_CHROOT)"
log "apt-get install ./$(basename "$deb") in the bookworm root"
if ! in_root "apt-get -q update && apt-get install -y -q /tmp/gpuwise-test/$(basename "$deb")" \
     >"$work/apt.log" 2>&1; then
  if grep -qiE "Temporary failure resolving|Could not connect|Failed to fetch|Unable to fetch" "$work/apt.log"; then
    skip "apt-get could not reach $mirror (see $work/apt.log)"
  fi
  cat "$work/apt.log" >&2
  fail "apt-get install of the package failed"
fi

log "gpuwise version"
in_root "gpuwise version" >"$work/version.out" 2>&1 || { cat "$work/version.out" >&2; fail "gpuwise version"; }
cat "$work/version.out" >&2
grep -q "[0-9]\+\.[0-9]\+\.[0-9]\+" "$work/version.out" || fail "gpuwise version printed no version"

log "gpuwise report trace.json.gz"
in_root "gpuwise report /tmp/gpuwise-test/trace.json.gz" >"$work/report.out" 2>&1 ||
  { cat "$work/report.out" >&2; fail "gpuwise report exited non-zero"; }
head -n 20 "$work/report.out" >&2
grep -qi "kernel" "$work/report.out" || fail "gpuwise report printed no kernels"

log "gpuwise run --simulate -- /usr/lib/gpuwise/samples/pageable_copies"
in_root "cd /tmp && gpuwise run --simulate --report-json /tmp/r.json -- /usr/lib/gpuwise/samples/pageable_copies" \
  >"$work/run.out" 2>&1 || { cat "$work/run.out" >&2; fail "gpuwise run --simulate exited non-zero"; }
head -n 20 "$work/run.out" >&2
grep -q "SIMULATED" "$work/run.out" || fail "the run's summary does not say SIMULATED DEVICE"
python3 - "$root/tmp/r.json" <<'PY' || fail "the run's report has no kernels"
import json, sys
report = json.load(open(sys.argv[1]))
count = report["summary"]["kernel_count"]
print(f"package_test: report.json: {count} kernels", file=sys.stderr)
sys.exit(0 if count > 0 else 1)
PY
rm -rf "$work"
log "passed"
