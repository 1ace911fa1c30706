#!/usr/bin/env bash
# Call 1 (session 49). The backward's rows of one warp (gen::bwd_warp_rows:
# bwd_dx, 32 threads a row, up to 32 elements a thread, at most 8 warps a
# CTA, no register minimum): no named barrier a row, the row's sums the
# warp's shuffles. The cases (every config at 1000-2002 columns, where the
# space now holds b1024 w1..8 r=w; memcheck on two variants; gpu_test's
# every config), then in one process each the default and the rows of one
# warp at M = 4096 and at x = 512 MiB.
source bench/gpu_call.sh
use s49a
s cases
cases 170 '*VariantSpace*N1000_bwd_dx:*VariantSpace*N2002_bwd_dx' \
  '*VariantSpace*v0_N1000_bwd_dx:*VariantSpace*v1_N1000_bwd_dx'
timeout 120 $D/gpu_test --gtest_filter='Gpu.EverySearchSpaceConfigIsCorrect' > $O/gpu_test_configs.log 2>&1; echo "gpu_test rc=$?"
grep -hE "configs checked|FAILED|PASSED" $O/gpu_test_configs.log | head
c() { echo "block_size=1024 num_warps=$1 rows_per_cta=$2 group_size_m=$3 cluster_size=1"; }
export LNTUNE_SWEEP_CONFIG="$(c 8 4 132);$(c 8 8 132);$(c 4 4 132);$(c 4 4 264);$(c 2 2 264);$(c 2 2 528);$(c 1 1 528);$(c 1 1 1056);$(c 8 4 132)"
s m4k
for dt in bf16 fp16 fp32; do LNTUNE_SWEEP_M=4096 sw m4k_$dt 100 bwd $dt 1024; done
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096 sw m4k_rms 100 bwd bf16 1024
LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096 sw m4k_res 100 bwd bf16 1024
LNTUNE_SWEEP_M=16384 sw m16k_bf16 100 bwd bf16 1024
s bw
sw bw_bf16 100 bwd bf16 1024
sw bw_fp32 100 bwd fp32 1024
s done
