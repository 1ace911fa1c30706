#!/usr/bin/env bash
# Builds against each other on the GPU, the way METHOD.md asks: each build's
# lntune_sweep in its own process, timed against the copy of that process,
# builds alternated, ROUNDS rounds (the per-call scripts under
# bench/results/*/scripts copied this loop each time; call this instead).
#   OUT=$OUT bash bench/gpu_ab.sh NAME ROUNDS DIR... -- SPEC...
# DIR: a build's stripped binaries (lntune_sweep; liblntune.so beside it when
# it is not static). SPEC: "label|VAR=value ...|sweep arguments", e.g.
#   "m4096|LNTUNE_SWEEP_M=4096|bwd bf16 1024 2048"   "big||fwd fp32 262144"
# LNTUNE_SWEEP_CONFIG=default unless the spec sets it. Every line goes to
# $OUT/NAME.log prefixed "<dir name> r<round> <label>"; a summary sorted by
# label and shape follows on stdout. Exit status: 1 when a sweep failed.
set -uo pipefail
usage() { echo "usage: gpu_ab.sh NAME ROUNDS DIR... -- SPEC..." >&2; exit 2; }
[ $# -ge 4 ] || usage
name=$1 rounds=$2
shift 2
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "gpu_ab.sh: ROUNDS must be a positive count, got '$rounds'" >&2; exit 2; }
dirs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  [ -x "$1/lntune_sweep" ] || { echo "gpu_ab.sh: $1/lntune_sweep is missing" >&2; exit 2; }
  dirs+=("$(cd "$1" && pwd)")
  shift
done
[ $# -ge 2 ] && [ ${#dirs[@]} -ge 1 ] || usage
shift
specs=("$@")
for spec in "${specs[@]}"; do
  IFS='|' read -r label vars args <<< "$spec"
  [ -n "$label" ] && [ -n "$args" ] || { echo "gpu_ab.sh: a spec is label|VAR=value ...|sweep arguments, got '$spec'" >&2; exit 2; }
  # Variables are space-separated words VAR=value; '&' between them is
  # sw_ab's syntax (gpu_call.sh), which env would take as one variable's
  # value (session 55's call 8 lost its A/B to that).
  for v in $vars; do
    [[ $v =~ ^[A-Za-z_][A-Za-z0-9_]*= && ! $v =~ \&[A-Za-z_][A-Za-z0-9_]*= ]] ||
      { echo "gpu_ab.sh: a spec's variables are space-separated VAR=value words, got '$v' in '$spec'" >&2; exit 2; }
  done
done
log=${OUT:-/tmp}/$name.log
: > "$log"
fail=0
for ((r = 1; r <= rounds; ++r)); do
  for d in "${dirs[@]}"; do
    for spec in "${specs[@]}"; do
      IFS='|' read -r label vars args <<< "$spec"
      # shellcheck disable=SC2086  # vars and args are word lists
      env LD_LIBRARY_PATH="/usr/local/cuda/lib64:$d" LNTUNE_CACHE=off LNTUNE_SWEEP_CONFIG=default $vars \
        "$d/lntune_sweep" $args 2>&1 | sed "s|^|$(basename "$d") r$r $label |" >> "$log"
      [ "${PIPESTATUS[0]}" = 0 ] || { echo "gpu_ab.sh: $(basename "$d") round $r '$spec' failed" >&2; fail=1; }
    done
  done
done
# build, round, label, op, dtype, N=, M=, time, unit, % of copy
grep -E " (fwd|bwd|train) " "$log" | awk '{print $3, $5, $6, $1, $2, $9, $10, $13}' | sort -k1,1 -k2,2 -k3,3V -k4,4 -k5,5
exit $fail
