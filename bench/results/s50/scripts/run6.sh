#!/usr/bin/env bash
# Call 6 (session 50). Call 5 found other configs than the defaults first at
# M = 16384 (124 rows a SM): bf16 1024 w4 r2 over 4 CTAs a SM (+3 points),
# 2048 w8 r2 over 2 (+2), 4096 w16 r2 over 1 (+3), fp32 1024 w4 r2 over 2
# (+1.7). Here those configs against the default from 62 to 496 rows a SM
# (M = 8192-65536), one process a shape (s50g), to bound a rule.
source bench/gpu_call.sh
use s50g
c() { echo "block_size=$1 num_warps=$2 rows_per_cta=$3 group_size_m=$4 cluster_size=1"; }
s configs
for m in 8192 16384 32768 65536; do
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 528);$(c 1024 8 4 264);$(c 1024 4 2 264)"; LNTUNE_SWEEP_M=$m sw bf16_1024_m$m 40 bwd bf16 768 1024)
  (export LNTUNE_SWEEP_CONFIG="$(c 2048 8 2 264);$(c 2048 8 2 132)"; LNTUNE_SWEEP_M=$m sw bf16_2048_m$m 40 bwd bf16 2048)
  (export LNTUNE_SWEEP_CONFIG="$(c 4096 16 2 132)"; LNTUNE_SWEEP_M=$m sw bf16_4096_m$m 40 bwd bf16 4096)
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 264);$(c 1024 4 2 528)"; LNTUNE_SWEEP_M=$m sw fp32_1024_m$m 40 bwd fp32 1024)
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 528);$(c 1024 4 2 264)"; LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=$m sw rms_1024_m$m 40 bwd bf16 1024)
done
s done
