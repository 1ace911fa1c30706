#!/usr/bin/env bash
# Call 10 (session 54). Call 9: loading the weight and bias with x
# (s54c) cost occupancy (48 registers: LayerNorm bf16 256 82%), dropped.
# s54d: the statistics by CTA without a CTA barrier: warps 1.. arrive at
# named barrier 1 and go on, warp 0 waits there after its outputs and
# stores the CTA's means and rstds (put_cta_stats / store_cta_stats).
# Every forward config at M = 300 (VariantSpace) with memcheck and
# synccheck (the named barrier), then s54a / s54b / s54d, two rounds.
source bench/gpu_call.sh
use s54d
s cases
cases 200 '*VariantSpace*fwd' '*VariantSpace*v0_N1000_fwd'
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='*VariantSpace*v0_N1000_fwd:*VariantSpace*v1_N1000_fwd' --gtest_brief=1 > $O/san_synccheck.log 2>&1; echo "synccheck rc=$?"; grep -h "ERROR SUMMARY\|PASSED\|FAILED" $O/san_synccheck.log
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s54a $B/s54b $B/s54d -- \
  "ln||fwd bf16 256 512 1024 4096" "lnh||fwd fp16 256" "ln32||fwd fp32 256" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 256" "add|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 256 4096" \
  "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 1024"
s done
