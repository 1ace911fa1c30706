#!/usr/bin/env bash
# Call 7 (session 48). Every config of the forwards still under their
# targets in call 5's tables (x = 512 MiB, lntune_sweep, s48b): 262144
# columns (fp32 LayerNorm 90, add + LayerNorm bf16 91, add + RMSNorm fp32
# 90; 92 wanted), RMSNorm bf16 65536 (91.4), add + LayerNorm bf16 16384
# (95.9; 97 wanted), LayerNorm bf16 512 (96).
source bench/gpu_call.sh
use s48b
s sweeps
sw ln32_256k 90 fwd fp32 262144
(export LNTUNE_SWEEP_RESIDUAL=1; sw addln16_256k 90 fwd bf16 262144)
(export LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm; sw addrms32_256k 90 fwd fp32 262144)
(export LNTUNE_SWEEP_OP=rmsnorm; sw rms16_64k 90 fwd bf16 65536)
(export LNTUNE_SWEEP_RESIDUAL=1; sw addln16_16k 90 fwd bf16 16384)
sw ln16_512 60 fwd bf16 512
s done
