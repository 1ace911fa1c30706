#!/usr/bin/env bash
# Call 7 (session 55). The fused forwards under 97 in call 4's Python table
# (add + LayerNorm 16-bit 4096-16384 and fp32 8192-16384, add + RMSNorm
# 16-bit 8192-16384 and fp32 4096-16384): every config again on s55d, since
# the CTA's statistics are stored together (06d9093) the configs of several
# rows a CTA may lead; x = 512 MiB, one process a shape set.
source bench/gpu_call.sh
use s55d
s sweeps
LNTUNE_SWEEP_RESIDUAL=1 sw add_bf16 75 fwd bf16 4096 8192 16384
LNTUNE_SWEEP_RESIDUAL=1 sw add_fp16 60 fwd fp16 8192 16384
LNTUNE_SWEEP_RESIDUAL=1 sw add_fp32 60 fwd fp32 8192 16384
LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm sw addrms_bf16 60 fwd bf16 8192 16384
LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm sw addrms_fp32 60 fwd fp32 8192 16384
s done
