#!/usr/bin/env bash
# Call 1: session 29's review (24527b5, never run on a GPU) and the staged
# backward prototype (wip/staged-bwd, a63daec). s30 = main (6c293a9),
# s30s = the branch. First the GPU suites of both builds (pytest on main),
# memcheck on the one-CTA cooperative path with unaligned dW/dB, then, alone
# on the GPU, the default backward of both builds against the copy,
# alternated, each its own process, two rounds.
set -uo pipefail
A=$PWD/.devbuild/s30
S=$PWD/.devbuild/s30s
O=${OUT:-/tmp}
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "suites of both builds, side by side"
PYTEST=1 bash bench/gpu_suites.sh $A call1_main > /tmp/suites_main.txt 2>&1 &
bash bench/gpu_suites.sh $S call1_staged > /tmp/suites_staged.txt 2>&1 &
wait
echo "-- main"; cat /tmp/suites_main.txt; echo "-- staged"; cat /tmp/suites_staged.txt
s "sanitizers"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$A
for tool in memcheck racecheck synccheck; do
  for D in $A $S; do
    cases=("1 fp32 1000" "4096 bf16 1024" "300 fp32 4095" "7 bf16 2048")
    [ $tool = memcheck ] || cases=("4096 bf16 1024" "300 fp32 4095")
    for c in "${cases[@]}"; do
      set -- $c
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$1 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $D/lntune_sweep bwd $2 $3 > /tmp/san.log 2>&1
      echo "$(basename $D) $tool M=$1 $2 N=$3 exit $?: $(grep -E 'SUMMARY' /tmp/san.log)"
    done
  done
  [ $tool = memcheck ] || continue
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $A/gpu_test --gtest_filter='*Unaligned*' --gtest_brief=1 > /tmp/san.log 2>&1
  echo "s30 $tool gpu_test Unaligned exit $?: $(grep -E 'SUMMARY|PASSED|FAILED' /tmp/san.log | tr '\n' ' ')"
done > $O/sanitizer_call1.log 2>&1
cat $O/sanitizer_call1.log
s "A/B default backward, M = 4096 and x = 512 MiB"
for round in 1 2; do
  for D in $A $S; do
    tag=$(basename $D)
    for dt in bf16 fp32; do
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 $D/lntune_sweep bwd $dt 1024 2048 4096 8192 16384 | sed "s/^/$tag r$round m4096 /"
      LNTUNE_SWEEP_CONFIG=default $D/lntune_sweep bwd $dt 1024 4096 16384 | sed "s/^/$tag r$round big /"
    done
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm $D/lntune_sweep bwd bf16 1024 2048 4096 | sed "s/^/$tag r$round m4096rms /"
  done
done > $O/ab_staged_call1.log 2>&1
grep -E " bwd " $O/ab_staged_call1.log | awk '{print $1, $2, $3, $5, $6, $9, $13}' | sort -k3,3 -k4,4 -k5,5V -k1,1 -k2,2
s done
