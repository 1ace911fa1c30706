#!/usr/bin/env bash
# Call 8 (session 47). Call 7 found add + RMSNorm fp32 at 262144 columns
# slower with the whole stores (74.6% of copy against 78.5 with store()),
# add + LayerNorm there faster (78.9 against 72.2): every config of add +
# RMSNorm fp32 262144 on s47f.
source bench/gpu_call.sh
use s47f
(export LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm; sw addrf262 60 bwd fp32 262144)
