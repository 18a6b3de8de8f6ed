#!/usr/bin/env bash
# Prints, one a line, the Debian packages that provide the shared libraries ELF... needs: what the
# runtime image installs, so it follows the build's real dependencies instead of a list kept by
# hand. Run in the build stage (where the -dev packages put the libraries).
#
# usage: runtime-packages.sh ELF...
set -euo pipefail

(($#)) || { echo "usage: runtime-packages.sh ELF..." >&2; exit 2; }
for elf in "$@"; do
  [[ -f "$elf" ]] || { echo "runtime-packages.sh: $elf: no such file" >&2; exit 2; }
  ldd "$elf" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'
done | sort -u | while read -r lib; do
  # usrmerge: dpkg may know the file under /lib or /usr/lib, by its own name or the link's.
  pkg=""
  for candidate in "$lib" "$(readlink -f "$lib")"; do
    for path in "$candidate" "${candidate#/usr}" "/usr${candidate}"; do
      [[ -n "$pkg" ]] || pkg="$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1 || true)"
    done
  done
  if [[ -z "$pkg" ]]; then
    echo "runtime-packages.sh: no package provides $lib" >&2
    exit 1
  fi
  echo "$pkg"
done | sort -u
