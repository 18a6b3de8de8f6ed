#!/usr/bin/env bash
# Makes an ELF file self-contained for images that lack its libraries (libzmq and what it links):
# copies ELF and every shared library it needs, except the C and C++ runtimes, into OUT and
# OUT/deps, and points their RUNPATH at $ORIGIN/deps ($ORIGIN for the deps themselves).
#
# Used for the shim (containers/Dockerfile: the webhook's init container copies OUT into the pod's
# shared volume, so /gpuwise/libgpuwise.so finds /gpuwise/deps/*) and for the CLI and the shim of
# scripts/gpu-bundle (a build that runs on a machine with none of our build dependencies).
#
# Not bundled, on purpose: glibc (libc, libm, libdl, libpthread, librt, ld-linux) and the C++
# runtime (libstdc++, libgcc_s) must be the process's own; a second copy breaks it. The image's
# glibc must therefore be at least the one in OUT/REQUIRED_GLIBC (written here, over everything
# in OUT).
#
# The portable shim (scripts/build-portable-shim) needs only glibc: then deps/ stays empty and no
# RUNPATH is set; a shim of an ordinary build gets its closure as above.
#
# usage: bundle-elf.sh ELF OUT        (needs ldd, patchelf, objdump; OUT/<ELF's name> is written)
set -euo pipefail

(($# == 2)) || { echo "usage: bundle-elf.sh ELF OUT" >&2; exit 2; }
elf="$1"
out="$2"
[[ -f "$elf" ]] || { echo "bundle-elf.sh: $elf: no such file" >&2; exit 2; }
for tool in ldd patchelf objdump; do
  command -v "$tool" >/dev/null || { echo "bundle-elf.sh: $tool is not installed" >&2; exit 2; }
done

system='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|ld-linux[-a-z0-9_]*|libstdc\+\+|libgcc_s)\.so'
name="$(basename "$elf")"
mkdir -p "$out/deps"
cp -f "$elf" "$out/$name"
# ldd lists the whole closure (deps of deps), which is what the copy needs.
ldd "$elf" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r soname path; do
  if [[ "$soname" =~ $system ]]; then continue; fi
  cp -fL "$path" "$out/deps/$soname"
  chmod 0644 "$out/deps/$soname"
  # shellcheck disable=SC2016 # $ORIGIN is for the dynamic loader, not the shell
  patchelf --set-rpath '$ORIGIN' "$out/deps/$soname"
done
shopt -s nullglob
bundled=("$out"/deps/*.so*)
if ((${#bundled[@]})); then
  # shellcheck disable=SC2016
  patchelf --set-rpath '$ORIGIN/deps' "$out/$name"
fi

# The newest glibc symbol version anything in OUT needs: the floor for the image.
objdump -T "$out/$name" "${bundled[@]}" |
  grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1 >"$out/REQUIRED_GLIBC"
echo "bundle-elf.sh: $name and $(find "$out/deps" -type f | wc -l) libraries in $out," \
  "needs $(cat "$out/REQUIRED_GLIBC") or newer" >&2
