#!/usr/bin/env bash
# Call 5 (session 54). The forward's row statistics stored by CTA (s54b:
# save_cta_stats, common.cuh) against main (s54a). First the probe, built
# on the headers before and after (bench/probes/small_row_fwd_probe.cu,
# carried in s54b), then every forward config of the forms' spaces at M = 300
# (VariantSpace, mean and rstd checked against the float64 reference,
# poisoned) with memcheck on the 16-bit ones, then the A/B of the defaults
# whose CTAs hold several rows, two rounds. gpu_test (every LayerNorm
# config at its shapes, mean and rstd checked) beside the cases.
source bench/gpu_call.sh
use s54b
s probe
for p in small_row_fwd_probe_old small_row_fwd_probe; do echo "# $p"; $D/$p | grep -v "^check.*err [0-9.e-]*$" | grep "FAILED\|lib\|memcpy \|plain N=256 tpr=16 rows=32"; done
s cases
timeout 300 $D/gpu_test --gtest_brief=1 > $O/gpu_test.log 2>&1 & gt=$!
cases 240 '*VariantSpace*fwd' '*VariantSpace*v0_N1000_fwd'
wait $gt; echo "gpu_test rc=$?"; grep -h "PASSED\|FAILED" $O/gpu_test.log | head
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s54a $B/s54b -- \
  "ln||fwd bf16 256 512 4096" "lnh||fwd fp16 256 512" "ln32||fwd fp32 256 512" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 256 512" "add|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 256 4096" \
  "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 256 1024"
s done
