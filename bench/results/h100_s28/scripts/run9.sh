#!/usr/bin/env bash
# Call 9: compute-sanitizer on the final build (94a676a), on backwards that
# finish alone (one CTA, M = 1) and in a small cooperative grid (M = 32).
set -uo pipefail
D=$PWD/.devbuild/s28
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off LNTUNE_SWEEP_CONFIG=default
for tool in memcheck racecheck synccheck; do
  for c in "1 bf16 4096 layernorm" "1 fp32 8192 rmsnorm" "32 bf16 1000 layernorm" "8 fp32 4095 rmsnorm"; do
    set -- $c
    LNTUNE_SWEEP_M=$1 LNTUNE_SWEEP_OP=$4 compute-sanitizer --tool $tool --error-exitcode 9 $D/lntune_sweep bwd $2 $3 > /tmp/san.log 2>&1
    rc=$?
    echo "$tool M=$1 $2 N=$3 $4 exit $rc: $(grep -E 'SUMMARY' /tmp/san.log) | $(grep -E '^bwd' /tmp/san.log | cut -c1-60)"
  done
done > $O/sanitizer_call9.log 2>&1
cat $O/sanitizer_call9.log
