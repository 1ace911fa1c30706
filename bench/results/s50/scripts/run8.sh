#!/usr/bin/env bash
# Call 8 (session 50). Every config of the space (LNTUNE_SWEEP_EVERY=1) for
# the fused backward (add + LayerNorm, add + RMSNorm; bf16, the residual in
# x's dtype) past 48 rows a SM, M = 16384, one process a sweep (s50h, main
# with call 7's rules, which leave the fused form alone).
source bench/gpu_call.sh
use s50h
s sweeps
LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=16384 sw res_ln 100 bwd bf16 1024 2048 4096
LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=16384 sw res_rms 100 bwd bf16 1024 2048 4096
s done
