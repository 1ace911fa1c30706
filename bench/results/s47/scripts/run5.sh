#!/usr/bin/env bash
# Call 5 (session 47). s47e = s47d + call 4's defaults (16-bit LayerNorm
# at 16384 columns in 16 warps at 4 stages, one CTA a SM; fp32 rows of
# 256K columns in 32 warps): A/B against s47d, then the GPU suites on s47e.
source bench/gpu_call.sh
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s47d $B/s47e -- \
  "ln||bwd bf16 16384" "lnh||bwd fp16 16384" "lnM|LNTUNE_SWEEP_M=4096|bwd bf16 16384" \
  "f32||bwd fp32 262144" "rmsf|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144"
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s47e s47e; echo "suites rc=$?"
grep -hE "tests? ran|PASSED|FAILED|Failure" $O/*_s47e.log | head -30
s done
