#!/usr/bin/env bash
# Call 3 (session 50). Call 2 found fp32 LayerNorm N = 1024 at M = 4096
# faster on the 16-bit training config (b1024 w4 r2 over 264 CTAs, dW/dB
# finished in the kernel): 19.5 us against the default's 21.2 (512 CTAs of
# 4 warps, bwd_dwdb after). Here every config of interest for fp32 rows at
# training sizes, in one process a shape (main, s50d), two rounds: the
# training configs (space.cpp, training_bwd_config) against the default.
source bench/gpu_call.sh
use s50d
c() { echo "block_size=$1 num_warps=$2 rows_per_cta=$3 group_size_m=$4 cluster_size=1"; }
s configs
for r in 1 2; do
  (export LNTUNE_SWEEP_CONFIG="$(c 512 4 2 264);$(c 512 2 2 264);$(c 512 4 4 264);$(c 512 8 4 264)"; LNTUNE_SWEEP_M=4096 sw r${r}_512 40 bwd fp32 512)
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 264);$(c 1024 8 2 264)"; LNTUNE_SWEEP_M=4096 sw r${r}_768 40 bwd fp32 768)
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 264);$(c 1024 8 2 264);$(c 1024 8 4 132)"; LNTUNE_SWEEP_M=4096 sw r${r}_1024 40 bwd fp32 1024)
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 264);$(c 1024 8 2 264)"; LNTUNE_SWEEP_M=2112 sw r${r}_1024_m2k 40 bwd fp32 1024)
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 264);$(c 1024 8 2 264)"; LNTUNE_SWEEP_M=6336 sw r${r}_1024_m6k 40 bwd fp32 1024)
  (export LNTUNE_SWEEP_CONFIG="$(c 2048 8 2 132);$(c 2048 8 2 264);$(c 2048 4 1 264);$(c 2048 16 4 132)"; LNTUNE_SWEEP_M=4096 sw r${r}_2048 40 bwd fp32 2048)
  (export LNTUNE_SWEEP_CONFIG="$(c 4096 16 2 132);$(c 4096 8 1 264)"; LNTUNE_SWEEP_M=4096 sw r${r}_4096 40 bwd fp32 4096)
  (export LNTUNE_SWEEP_CONFIG="$(c 1024 4 2 264);$(c 1024 8 2 264)"; LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096 sw r${r}_rms1024 40 bwd fp32 1024)
  (export LNTUNE_SWEEP_CONFIG="$(c 2048 8 2 132);$(c 2048 8 2 264)"; LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096 sw r${r}_rms2048 40 bwd fp32 2048)
done
s done
