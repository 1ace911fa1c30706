#!/usr/bin/env bash
# Call 6 (session 51). Past the decode rule (s51e): every config in one
# process at 2-32 rows an SM, 8192-16384 columns (bf16 LayerNorm; RMSNorm
# and fp32 at 16384), where the default took 11.7 us at M = 300 against
# 8.6 on the rule's 16 warps at M = 256 (call 5).
source bench/gpu_call.sh
use s51e
s sweeps
for m in 300 528 1056 2112 4224; do
  LNTUNE_SWEEP_M=$m sw m${m}_bf16 60 fwd bf16 8192 12288 16384
done
LNTUNE_SWEEP_M=528 LNTUNE_SWEEP_OP=rmsnorm sw m528_rms 30 fwd bf16 16384
LNTUNE_SWEEP_M=528 sw m528_fp32 30 fwd fp32 16384
s done
