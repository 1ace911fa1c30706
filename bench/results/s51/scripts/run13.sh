#!/usr/bin/env bash
# Call 13 (session 51, the last device minutes). Part of
# bench/experiments/sweeps-after-s51.sh on s51h: every config at 12288
# columns for RMSNorm and the fused forms (x = 512 MiB), and the forward at
# M = 4096 below 8192 columns.
source bench/gpu_call.sh
use s51h
s sweeps
LNTUNE_SWEEP_OP=rmsnorm sw rms12k_bw 30 fwd bf16 12288
LNTUNE_SWEEP_RESIDUAL=1 sw addln12k_bw 30 fwd bf16 12288
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 sw addrms12k_bw 30 fwd bf16 12288
LNTUNE_SWEEP_M=4096 sw fwd_m4k 30 fwd bf16 1024 2048 4096 6144
s done
