#!/usr/bin/env bash
# Call 12 (session 50). The neighbours of this session's rules past 48 rows
# a SM, at M = 16384 (s50j), configs in one process a shape: RMSNorm bf16
# 2048 and 4096, fp32 LayerNorm 512, an fp32 residual stream beside bf16
# 1024 and 2048.
source bench/gpu_call.sh
use s50j
c() { echo "block_size=$1 num_warps=$2 rows_per_cta=$3 group_size_m=$4 cluster_size=1"; }
s configs
for r in 1 2; do
  (export LNTUNE_SWEEP_CONFIG="$(c 2048 8 2 264);$(c 2048 16 2 264)"; LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=16384 sw r${r}_rms2048 30 bwd bf16 2048)
  (export LNTUNE_SWEEP_CONFIG="$(c 4096 16 2 132)"; LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=16384 sw r${r}_rms4096 30 bwd bf16 4096)
  (export LNTUNE_SWEEP_CONFIG="$(c 512 4 2 264);$(c 512 4 2 528)"; LNTUNE_SWEEP_M=16384 sw r${r}_f32_512 30 bwd fp32 512)
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 264);$(c 1024 4 2 528)"; LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=16384 sw r${r}_res32_1024 30 bwd bf16 1024)
  (export LNTUNE_SWEEP_CONFIG="$(c 2048 8 2 264);$(c 2048 8 2 132)"; LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=16384 sw r${r}_res32_2048 30 bwd bf16 2048)
done
s done
