#!/usr/bin/env bash
# Call 9 (session 47). s47h = s47f with add + RMSNorm fp32's stores through
# store() where dz comes through L2 (bulk_dz; call 7), against s47f.
source bench/gpu_call.sh
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s47f $B/s47h -- \
  "addrf|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144" \
  "addf|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 262144" \
  "rmsf|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144"
