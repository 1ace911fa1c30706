#!/usr/bin/env bash
# Call 6 (session 46). s46e. Every config where the session's tables left
# a gap: the fused fp32 backward at M = 4096, N = 8192 (58-66% of copy end to
# end in call 5's grid: the default there tiles the row), plain RMSNorm bf16
# at 16384 (89.4 in session 45's table) and 16-bit LayerNorm at 9216 and
# 17408 (81 and 76 in session 44's scan).
source bench/gpu_call.sh
use s46e
s "every config"
(export LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096; sw lnf8kM4k 70 bwd fp32 8192)
(export LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096 LNTUNE_SWEEP_OP=rmsnorm; sw rmsf8kM4k 70 bwd fp32 8192)
(export LNTUNE_SWEEP_OP=rmsnorm; sw rms16k 60 bwd bf16 16384)
sw ln9k 60 bwd bf16 9216
sw ln17k 60 bwd bf16 17408
s done
