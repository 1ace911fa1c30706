#!/usr/bin/env bash
# Call 3 (session 47). s47d = s47b + 16-bit rows beside an fp32 residual
# stream in their own backward defaults (calls 1-2's sweeps) + the wide
# backward's stores whole (store_global: st.global.v4, where the compiler
# had split each 16-byte store of dx into four). The new Variants cases and
# the wide backward's under memcheck, then s47b against s47d.
source bench/gpu_call.sh
use s47d
s "cases"
cases 120 '*Variants*resfp32*:*Variants*N16384*:*Variants*N32768*:*Variants*N65536*:*Variants*N131072*:*Variants*N262144*:*Variants*N40000*:Norms.Wide*:GpuNorms.*' '*Variants*bf16*resfp32*N16384*:*Variants*fp16*resfp32*N65536*:*Variants*resfp32*nodz*N262144*:*Variants*layernorm_bf16_wbf16_WB_resbf16_M301_N32768*'
timeout 90 $D/gpu_test --gtest_filter='*WideBackward*:*N65536*:*N262144*' > $O/gpu_test.log 2>&1; echo "gpu_test rc=$?"
grep -hE "PASSED|FAILED|Failure" $O/gpu_test.log | head
s "ab"
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s47b $B/s47d -- \
  "lnr|LNTUNE_SWEEP_RESIDUAL=fp32|bwd bf16 16384 32768 65536 131072 262144" \
  "rmsr|LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 65536 262144" \
  "ln||bwd bf16 16384 65536 262144" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 16384 65536 262144" \
  "f32||bwd fp32 65536 262144" \
  "rmsf|LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 262144" \
  "add|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384 65536 262144"
s done
