#!/usr/bin/env bash
# Call 2 (session 49). The in-kernel dW/dB finish by warps loads 16 partial
# rows a lane at once (bwd_dwdb.cuh, warp_item_rows; 8 before), so that up
# to 512 partial rows finish in one round: grids of two CTAs a SM (264 on
# an H200) now finish in the kernel where they ran bwd_dwdb after it (s49b
# against s48c, main before). The cases (gpu_test's finish tests, every
# config at 1000-2002 columns, memcheck), then every config of interest at
# M = 4096 in one process per build, builds alternated, and the defaults
# A/B'd where the path may change (P of 257-512).
source bench/gpu_call.sh
use s49b
s cases
cases 170 '*VariantSpace*N1000_bwd_dx:*VariantSpace*N2002_bwd_dx' '*VariantSpace*v1_N1000_bwd_dx'
timeout 150 $D/gpu_test --gtest_filter='Gpu.*Finish*:Gpu.EverySearchSpaceConfigIsCorrect:Gpu.BackwardIsBitwise*' > $O/gpu_test_finish.log 2>&1; echo "gpu_test rc=$?"
grep -hE "configs checked|FAILED|PASSED|Failure" $O/gpu_test_finish.log | head
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 $D/gpu_test --gtest_filter='Gpu.WarpFinishSumsManyPartialRows' --gtest_brief=1 > $O/san_finish.log 2>&1; echo "memcheck finish rc=$?"; grep -h "ERROR SUMMARY" $O/san_finish.log
c() { echo "block_size=$1 num_warps=$2 rows_per_cta=$3 group_size_m=$4 cluster_size=1"; }
C1024="$(c 1024 8 4 132);$(c 1024 4 2 264);$(c 1024 8 2 264);$(c 1024 8 4 264);$(c 1024 4 1 264);$(c 1024 2 1 264);$(c 1024 4 2 132);$(c 1024 8 2 132);$(c 1024 8 4 132)"
C2048="$(c 2048 8 2 132);$(c 2048 8 1 264);$(c 2048 4 1 264);$(c 2048 8 2 264);$(c 2048 16 4 132);$(c 2048 8 2 132)"
s configs
for r in 1 2; do
  for b in s48c s49b; do
    use $b
    (export LNTUNE_SWEEP_CONFIG="$C1024"; LNTUNE_SWEEP_M=4096 sw ${b}_r${r}_bf16_1024 60 bwd bf16 1024)
    (export LNTUNE_SWEEP_CONFIG="$C1024"; LNTUNE_SWEEP_M=4096 sw ${b}_r${r}_fp16_1024 60 bwd fp16 1024)
    (export LNTUNE_SWEEP_CONFIG="$C2048"; LNTUNE_SWEEP_M=4096 sw ${b}_r${r}_bf16_2048 60 bwd bf16 2048)
  done
done
s defaults
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s48c $B/s49b -- \
  "m4k|LNTUNE_SWEEP_M=4096|bwd bf16 512 1024 2048" "m4kf|LNTUNE_SWEEP_M=4096|bwd fp32 512 1024" \
  "m16k|LNTUNE_SWEEP_M=16384|bwd bf16 512 1024" "m1k|LNTUNE_SWEEP_M=1024|bwd bf16 256 1024" \
  "rms4k|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 1024" "bw||bwd bf16 256 1024"
s done
