#!/usr/bin/env bash
# Copies a build's GPU binaries, stripped, into a folder the device tool can
# carry (.devbuild is ignored by git; the carry limit is 64 MiB in all).
#   bash scripts/stage.sh NAME [BUILD_DIR]   -> .devbuild/NAME
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: stage.sh NAME [BUILD_DIR]}
b=${2:-build}
# NAME is a folder under .devbuild, replaced whole: letters, digits, '.', '_'
# and '-', not starting with '.' (no path may climb out of .devbuild).
[[ $name =~ ^[A-Za-z0-9_-][A-Za-z0-9._-]*$ ]] || { echo "stage.sh: NAME must be letters, digits, '.', '_' or '-' (not starting with '.'), got '$name'" >&2; exit 2; }
[ -d "$b" ] || { echo "stage.sh: no build directory '$b'" >&2; exit 2; }
d=.devbuild/$name
rm -rf "$d" && mkdir -p "$d"
for f in bench/lntune_sweep bench/lntune_overhead tests/gpu_test tests/gpu_norms_test \
         tests/tuner_gpu_test tests/gpu_stress_test tuner/lntune; do
  [ -f "$b/$f" ] || { echo "stage.sh: $b/$f is missing (build first)" >&2; exit 1; }
  strip -o "$d/$(basename "$f")" "$b/$f"
done
lib=$(ls "$b"/lib/liblntune.so.0.* 2>/dev/null | head -1)
[ -n "$lib" ] || lib=$(find "$b" -name 'liblntune.so.0*' -type f | head -1)
[ -n "$lib" ] || { echo "stage.sh: no liblntune.so.0* under $b (build first)" >&2; exit 1; }
strip -o "$d/liblntune.so.0" "$lib"
ln -sf liblntune.so.0 "$d/liblntune.so"
du -sh "$d"
