#!/usr/bin/env bash
# Call 6 (session 52). Every config in one process (one round) at M = 4096
# forwards not yet swept, on main (s52f, aaeeca0): RMSNorm, add + RMSNorm
# and add + LayerNorm bf16 past 1024 columns, fp32 LayerNorm, 16-bit
# LayerNorm between the powers of two, and the fused backward at M = 4096
# of 12288 columns.
source bench/gpu_call.sh
use s52f
s sweeps
export LNTUNE_SWEEP_M=4096
LNTUNE_SWEEP_OP=rmsnorm sw rms_m4k 35 fwd bf16 2048 3072 4096 8192 16384
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 sw addrms_m4k 35 fwd bf16 2048 4096 8192 16384
LNTUNE_SWEEP_RESIDUAL=1 sw addln_m4k 35 fwd bf16 3072 8192 16384
sw fp32_m4k 35 fwd fp32 1024 2048 4096 8192
sw ln_m4k 35 fwd bf16 2560 5120 6144
s done
