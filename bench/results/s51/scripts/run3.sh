#!/usr/bin/env bash
# Call 3 (session 51). Every config of the space (LNTUNE_SWEEP_EVERY=1), one
# process a sweep, on main with session 50's three patches (s51d = 42a88f0):
# the finishing entry's new register bound may move the best configs at
# training sizes. Then the bandwidth-regime forwards under 92 in session
# 48's Python table (RMSNorm bf16 65536, fp32 LayerNorm and RMSNorm 262144).
source bench/gpu_call.sh
use s51d
s sweeps
for r in 1 2; do
  LNTUNE_SWEEP_M=4096 sw r${r}_m4k_bf16 90 bwd bf16 768 1024 2048
done
LNTUNE_SWEEP_M=4096 sw m4k_fp16 40 bwd fp16 1024
LNTUNE_SWEEP_M=4096 sw m4k_fp32 60 bwd fp32 1024 2048
LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm sw m4k_rms 40 bwd bf16 1024
LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_RESIDUAL=1 sw m4k_res 40 bwd bf16 1024
LNTUNE_SWEEP_M=8192 sw m8k_bf16 60 bwd bf16 1024 2048
LNTUNE_SWEEP_OP=rmsnorm sw bw_rms_fwd 90 fwd bf16 65536
sw bw_fp32_fwd 90 fwd fp32 262144
s done
