#!/usr/bin/env bash
# Call 5 (session 55). With the statistics stored by CTA (06d9093, s55b),
# the cost of several rows a CTA moved: every forward config again where
# the default holds several rows a CTA and a target is close (LayerNorm
# 16-bit 256 at 96.2-96.7 in the Python harness; session 53's call 4 had
# bf16 256 r64 at 96.9 against the default's 96.3), x = 512 MiB.
source bench/gpu_call.sh
use s55b
s sweeps
sw bf16_256 60 fwd bf16 256
sw fp16_256 60 fwd fp16 256
sw bf16_512 60 fwd bf16 512
sw fp32_256 60 fwd fp32 256
LNTUNE_SWEEP_OP=rmsnorm sw rms_bf16_512 60 fwd bf16 512
LNTUNE_SWEEP_RESIDUAL=1 sw add_bf16_256 60 fwd bf16 256
s done
