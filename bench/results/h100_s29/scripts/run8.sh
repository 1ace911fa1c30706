#!/usr/bin/env bash
# Call 8: the small-M rule narrowed after call 7 (M = 1, and M = 5 to
# 16384 / N). gpu_test with it; then alone on the GPU: the defaults of
# ef8db03 (s29d) and this build (s29f), alternated; and bwd_dwdb after the
# dx kernel at small M without (s29b, cf92e13) and with (s29d) the
# programmatic dependent launch, same configs (LNTUNE_SWEEP_FINISH=separate).
set -uo pipefail
A=$PWD/.devbuild/s29b
B=$PWD/.devbuild/s29d
D=$PWD/.devbuild/s29f
O=${OUT:-/tmp}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64
export LNTUNE_CACHE=off
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
s "gpu_test"
timeout 400 $D/gpu_test --gtest_brief=1 > $O/gpu_test_call8.log 2>&1; echo "gpu_test rc=$?"
grep -hE "PASSED|FAILED|\[ finish|\[ regs" $O/gpu_test_call8.log | head
s "A/B small-M defaults"
for round in 1 2; do
  for build in $B $D; do
    tag=$(basename $build)
    for m in 1 5 8 16 17 32; do
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $build/lntune_sweep bwd bf16 1024 2048 | sed "s/^/$tag r$round ln /"
      LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $build/lntune_sweep bwd fp32 1024 2048 | sed "s/^/$tag r$round ln /"
      LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $build/lntune_sweep bwd bf16 1024 2048 | sed "s/^/$tag r$round rms /"
    done
  done
done > $O/ab_small_m_call8.log 2>&1
grep -E " bwd " $O/ab_small_m_call8.log | awk '{print $3, $5, $6, $7, $1, $2, $9}' | sort -k1,1 -k2,2 -k3,3V -k4,4V -k5,5 -k6,6 | paste - - - - | awk '{printf "%s %s %s %s | %s %s | %s %s\n", $1,$2,$3,$4, $7, $21, $14, $28}'
s "A/B PDL, two kernels at small M"
for round in 1 2; do
  for build in $A $B; do
    tag=$(basename $build)
    for m in 8 32 128 512; do
      LNTUNE_SWEEP_FINISH=separate LNTUNE_SWEEP_CONFIG=default LNTUNE_SWEEP_M=$m $build/lntune_sweep bwd bf16 1024 4096 | sed "s/^/$tag r$round sep /"
    done
    LNTUNE_SWEEP_CONFIG="block_size=1024 num_warps=16 rows_per_cta=2 group_size_m=16" LNTUNE_SWEEP_M=32 $build/lntune_sweep bwd bf16 1024 | grep "best of" | sed "s/^/$tag r$round w16r2 /"
  done
done > $O/ab_pdl_small_call8.log 2>&1
grep -E " bwd " $O/ab_pdl_small_call8.log | awk '{print $3, $5, $6, $7, $1, $2, ($3=="w16r2" ? $18 : $9)}' | sort -k1,1 -k2,2 -k3,3V -k4,4V -k5,5 -k6,6 | paste - - - - | awk '{printf "%s %s %s %s | nopdl %s pdl %s | nopdl %s pdl %s\n", $1,$2,$3,$4, $7, $21, $14, $28}'
s done
