#!/usr/bin/env bash
# Call 7 (session 47). The Python table (call 6) put add + RMSNorm fp32
# at 262144 columns at 73.7% of copy (76.9 in session 46's): s47g = s47f
# with the wide backward's dx / dresidual stores through store() again (the
# partial rows' kept whole), against s47f, for the fp32 rows of 256K
# columns.
source bench/gpu_call.sh
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s47g $B/s47f -- \
  "addrf|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144" \
  "addf|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 262144" \
  "rmsf|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144"
s done
