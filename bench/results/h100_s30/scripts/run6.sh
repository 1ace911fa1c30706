#!/usr/bin/env bash
# Call 6: s30f = the staged rows in static shared memory where they fit (as
# s30d) and in dynamic shared memory beyond (as s30e), never run before.
# GPU suites and sanitizers of s30f, then alone on the GPU: s30d (static
# only) against s30f, each its own process, two rounds, M = 4096 and
# x = 512 MiB, LayerNorm and RMSNorm.
set -uo pipefail
P=$PWD/.devbuild/s30d
D=$PWD/.devbuild/s30f
O=${OUT:-/tmp}
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
s "suites"
bash bench/gpu_suites.sh $D call6
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
s "sanitizers"
for tool in memcheck racecheck synccheck; do
  for c in "4096 fp32 4096" "4096 bf16 8192" "4096 bf16 1024" "300 fp32 4095" "3 fp32 4096"; do
    set -- $c
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $D/lntune_sweep bwd $2 $3 > /tmp/san.log 2>&1
    echo "$tool M=$1 $2 N=$3 exit $?: $(grep -E 'SUMMARY' /tmp/san.log)"
  done
done > $O/sanitizer_call6.log 2>&1
cat $O/sanitizer_call6.log
s "A/B defaults"
for round in 1 2; do
  for B in $P $D; do
    tag=$(basename $B)
    for dt in bf16 fp32; do
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 $B/lntune_sweep bwd $dt 1024 2048 4096 8192 16384 | sed "s/^/$tag r$round m4096 /"
      LNTUNE_SWEEP_CONFIG=default $B/lntune_sweep bwd $dt 4096 8192 | sed "s/^/$tag r$round big /"
    done
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm $B/lntune_sweep bwd bf16 1024 4096 8192 | sed "s/^/$tag r$round m4096rms /"
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 $B/lntune_sweep bwd fp16 8192 | sed "s/^/$tag r$round m4096 /"
  done
done > $O/ab_hybrid_call6.log 2>&1
grep -E " bwd " $O/ab_hybrid_call6.log | awk '{print $1, $2, $3, $5, $6, $9, $10, $13}' | sort -k3,3 -k4,4 -k5,5V -k1,1 -k2,2
s done
