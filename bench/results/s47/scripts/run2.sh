#!/usr/bin/env bash
# Call 2 (session 47). Every config of the 16-bit backward beside an fp32
# residual stream at the other N (call 1 had 32768 and 262144: the
# defaults 75.1 / 69.8% of copy against 95.9 / 80.4 for the best), then
# s47b (RMSNorm's backward without the unused sum of w dy) against s47a.
source bench/gpu_call.sh
use s47a
s "fp32 residual stream"
(export LNTUNE_SWEEP_RESIDUAL=fp32; sw lnr16k 45 bwd bf16 16384)
(export LNTUNE_SWEEP_RESIDUAL=fp32; sw lnr64k 45 bwd bf16 65536)
(export LNTUNE_SWEEP_RESIDUAL=fp32; sw lnr128k 45 bwd bf16 131072)
(export LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_OP=rmsnorm; sw rmsr32k 45 bwd bf16 32768)
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s47a $B/s47b -- \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1024 4096 16384 65536" \
  "rmsf|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 1024 262144" \
  "rmsM|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_M=4096|bwd bf16 1024 4096"
s done
