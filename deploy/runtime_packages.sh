#!/usr/bin/env bash
# Prints the Debian packages that provide the shared libraries a binary loads, one per line,
# so the runtime image installs exactly what the build linked against.
#   deploy/runtime_packages.sh build/ignis
set -euo pipefail
bin=${1:?usage: runtime_packages.sh BINARY}
[ -x "$bin" ] || { echo "runtime_packages: $bin is not an executable" >&2; exit 1; }

owner() {
  # dpkg records the path a package ships; with merged /usr the loader may report the other
  # spelling (/lib vs /usr/lib) or a symlink, so try each form.
  local lib=$1 real candidates=()
  real=$(readlink -f "$lib")
  candidates=("$lib" "$real")
  case $lib in
    /usr/lib/*) candidates+=("${lib#/usr}") ;;
    /lib/*) candidates+=("/usr$lib") ;;
  esac
  case $real in
    /usr/lib/*) candidates+=("${real#/usr}") ;;
    /lib/*) candidates+=("/usr$real") ;;
  esac
  for c in "${candidates[@]}"; do
    if out=$(dpkg-query -S "$c" 2>/dev/null); then
      # "pkg:arch: /path" or "pkg1, pkg2: /path"
      echo "${out%%: *}" | tr ',' '\n' | sed 's/^ *//; s/:.*$//'
      return 0
    fi
  done
  echo "runtime_packages: no package owns $lib" >&2
  return 1
}

missing=$(ldd "$bin" | grep 'not found' || true)
[ -z "$missing" ] || { echo "runtime_packages: unresolved libraries:" >&2; echo "$missing" >&2; exit 1; }
libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' | sort -u)
packages=""
for lib in $libs; do
  names=$(owner "$lib") || exit 1
  packages+="$names"$'\n'
done
printf '%s' "$packages" | sort -u
