#!/usr/bin/env bash
# Call 7 (session 53). Every config in one process (one round) at x = 512
# MiB for the fused forwards that read under 97 in call 6's matched table:
# add + LayerNorm bf16 / fp16 4096, 8192, 16384, add + LayerNorm fp32 16384,
# add + RMSNorm fp32 8192, 16384. On main (s53a).
source bench/gpu_call.sh
use s53a
s sweeps
LNTUNE_SWEEP_RESIDUAL=1 sw addln_bf16 45 fwd bf16 4096 8192 16384
LNTUNE_SWEEP_RESIDUAL=1 sw addln_fp16 45 fwd fp16 4096 8192 16384
LNTUNE_SWEEP_RESIDUAL=1 sw addln_fp32 25 fwd fp32 16384
LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm sw addrms_fp32 40 fwd fp32 8192 16384
s done
