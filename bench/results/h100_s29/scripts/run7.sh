#!/usr/bin/env bash
# Call 7: the small-M rule of the backward's default (space.cpp, uncommitted
# when run: rows of 513-2048 columns, M = 1 and 5-128). The GPU suites and
# sanitizers with it, then alone on the GPU the defaults of the build before
# (s29d, ef8db03) and this one (s29e), alternated, each its own process;
# then the host/kernel table against PyTorch.
set -uo pipefail
B=$PWD/.devbuild/s29d
D=$PWD/.devbuild/s29e
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$D
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "gpu tests"
for i in 0 1 2 3; do
  ( GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 480 $D/gpu_norms_test --gtest_brief=1 > /tmp/norms_$i.log 2>&1; echo "norms shard $i rc=$?" ) &
done
( timeout 480 $D/gpu_test --gtest_brief=1 > /tmp/gpu_test.log 2>&1; echo "gpu_test rc=$?" ) &
wait
cat /tmp/norms_*.log > $O/gpu_norms_test_call7.log; cp /tmp/gpu_test.log $O/gpu_test_call7.log
grep -hE "PASSED|FAILED|\[ finish|\[ regs" $O/gpu_norms_test_call7.log $O/gpu_test_call7.log | head -20
s "sanitizers"
for tool in memcheck racecheck synccheck; do
  for c in "32 bf16 1000 layernorm" "5 fp32 2047 rmsnorm" "1 bf16 2048 layernorm"; do
    set -- $c
    LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$1 LNTUNE_SWEEP_OP=$4 timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $D/lntune_sweep bwd $2 $3 > /tmp/san.log 2>&1
    echo "$tool M=$1 $2 N=$3 $4 exit $?: $(grep -E 'SUMMARY' /tmp/san.log)"
  done
done > $O/sanitizer_call7.log 2>&1
cat $O/sanitizer_call7.log
s "A/B small-M defaults"
for round in 1 2; do
  for build in $B $D; do
    tag=$(basename $build)
    for m in 1 5 8 16 32 64 128; do
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $build/lntune_sweep bwd bf16 1024 2048 | sed "s/^/$tag r$round ln /"
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $build/lntune_sweep bwd fp32 1024 2048 | sed "s/^/$tag r$round ln /"
      LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $build/lntune_sweep bwd bf16 1024 2048 | sed "s/^/$tag r$round rms /"
    done
  done
done > $O/ab_small_m_call7.log 2>&1
grep -E " bwd " $O/ab_small_m_call7.log | awk '{print $3, $5, $6, $7, $1, $2, $9}' | sort -k1,1 -k2,2 -k3,3V -k4,4V -k5,5 -k6,6 | paste - - - - | awk '{printf "%s %s %s %s | %s %s | %s %s\n", $1,$2,$3,$4, $7, $21, $14, $28}'
export LNTUNE_LIBRARY=$D/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "layernorm host"
timeout 240 python3 bench/bench_layernorm.py --no-plots --section host --out /tmp/ho > $O/host_call7.log 2>&1; echo "rc=$?"
cp /tmp/ho/results.md $O/host_results_call7.md 2>/dev/null
grep -E "^\| (1|32|256|4096) \|" $O/host_results_call7.md | head -30
s done
