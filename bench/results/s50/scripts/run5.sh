#!/usr/bin/env bash
# Call 5 (session 50). Every config of the space (LNTUNE_SWEEP_EVERY=1),
# one process a sweep, on main with the fp32 rule (s50g), at training
# shapes outside the rules measured so far: M = 16384 (124 rows a SM), and
# 16-bit rows with fp32 weights (autocast's LayerNorm) at M = 4096.
source bench/gpu_call.sh
use s50g
s sweeps
LNTUNE_SWEEP_M=16384 sw m16k_bf16 120 bwd bf16 1024 2048 4096
LNTUNE_SWEEP_M=16384 sw m16k_fp32 60 bwd fp32 1024 2048
LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_W=fp32 sw m4k_bf16_w32 90 bwd bf16 1024 2048 4096
LNTUNE_SWEEP_M=16384 sw m16k_fwd_bf16 60 fwd bf16 1024 4096
s done
