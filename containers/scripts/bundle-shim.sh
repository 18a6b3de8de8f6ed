#!/usr/bin/env bash
# Makes the shim self-contained for training images that lack its libraries (libzmq and what it
# links): copies libgpuwise.so and every shared library it needs, except the C and C++ runtimes
# the training process already has, into OUT and OUT/deps, and points their RUNPATH at
# $ORIGIN/deps ($ORIGIN for the deps themselves). The webhook's init container copies OUT into
# the pod's shared volume, so /gpuwise/libgpuwise.so finds /gpuwise/deps/*.
#
# Not bundled, on purpose: glibc (libc, libm, libdl, libpthread, librt, ld-linux) and the C++
# runtime (libstdc++, libgcc_s) must be the process's own; a second copy breaks it. The training
# image's glibc must therefore be at least the one in REQUIRED_GLIBC (written here).
#
# The image bundles the portable shim (scripts/build-portable-shim), which needs only glibc: then
# deps/ stays empty and no RUNPATH is set; a shim of an ordinary build gets its closure as above.
#
# usage: bundle-shim.sh LIBGPUWISE_SO OUT        (needs ldd, patchelf, objdump)
set -euo pipefail

(($# == 2)) || { echo "usage: bundle-shim.sh LIBGPUWISE_SO OUT" >&2; exit 2; }
shim="$1"
out="$2"
[[ -f "$shim" ]] || { echo "bundle-shim.sh: $shim: no such file" >&2; exit 2; }
for tool in ldd patchelf objdump; do
  command -v "$tool" >/dev/null || { echo "bundle-shim.sh: $tool is not installed" >&2; exit 2; }
done

system='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux[-a-z0-9_]*|libstdc\+\+|libgcc_s)\.so'
mkdir -p "$out/deps"
cp -f "$shim" "$out/libgpuwise.so"
# ldd lists the whole closure (deps of deps), which is what the pod needs.
ldd "$shim" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname path; do
  if [[ "$soname" =~ $system ]]; then continue; fi
  cp -fL "$path" "$out/deps/$soname"
  chmod 0644 "$out/deps/$soname"
  # shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, not the shell
  patchelf --set-rpath '$ORIGIN' "$out/deps/$soname"
done
# The portable shim (scripts/build-portable-shim) needs nothing but glibc: no deps, no RUNPATH.
shopt -s nullglob
bundled=("$out"/deps/*.so*)
if ((${#bundled[@]})); then
  # shellcheck disable=SC2016
  patchelf --set-rpath '$ORIGIN/deps' "$out/libgpuwise.so"
fi

# The newest glibc symbol version anything here needs: the floor for training images.
objdump -T "$out/libgpuwise.so" "${bundled[@]}" |
  grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1 >"$out/REQUIRED_GLIBC"
echo "bundle-shim.sh: $(find "$out/deps" -type f | wc -l) libraries bundled in $out/deps," \
  "needs $(cat "$out/REQUIRED_GLIBC") or newer" >&2
