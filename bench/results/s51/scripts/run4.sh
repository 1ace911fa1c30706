#!/usr/bin/env bash
# Call 4 (session 51). The decode regime's forward (small M), every config
# of the space in one process a shape (s51d = 42a88f0): one CTA a row of
# 16384 columns took 10.6 us at M = 1 against 6.0 at 4096 (session 50's
# table); the space holds clusters of 2, 4 and 8 there.
source bench/gpu_call.sh
use s51d
s sweeps
for m in 1 8 64; do
  LNTUNE_SWEEP_M=$m sw m${m}_bf16 60 fwd bf16 8192 12288 16384 32768 65536
done
LNTUNE_SWEEP_M=1 sw m1_fp32 40 fwd fp32 8192 16384
LNTUNE_SWEEP_M=1 LNTUNE_SWEEP_OP=rmsnorm sw m1_rms 40 fwd bf16 16384
LNTUNE_SWEEP_M=1 LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 sw m1_addrms 40 fwd bf16 16384
LNTUNE_SWEEP_M=256 sw m256_bf16 40 fwd bf16 16384
s done
