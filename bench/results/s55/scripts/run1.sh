#!/usr/bin/env bash
# Call 1 (session 55). The two forward patches session 54 left waiting
# (bench/experiments): s55b = main + fwd-cta-stats.patch (the row statistics
# of a CTA of several rows stored by warp 0 behind named barrier 1, with the
# fix for the last partial CTA), s55c = s55b + fwd-affine-prefetch.patch
# (the single tile's weight and bias prefetched into L1 under x's loads).
# s54a is main (no kernel change since cf55e4d). On s55c, which holds both:
# the cases session 54's first version failed, every forward config at
# M = 300, memcheck and synccheck on a case each; then the A/B of the three
# builds, two rounds, over both patches' shapes.
source bench/gpu_call.sh
use s55c
s tests
timeout 240 $D/gpu_test --gtest_filter='*Sweep*M1_*:*Sweep*M257_*:*InKernelDwdbFinish*' --gtest_brief=1 > $O/gpu_test.log 2>&1 & gt=$!
cases 240 '*Variants*M67_*:*Variants*M1_*:*VariantSpace*fwd' '*Variants*/layernorm_bf16_wbf16_WB_M67_N37_pad5:*VariantSpace*v0_N1000_fwd'
wait $gt; echo "gpu_test rc=$?"; grep -hE "PASSED|FAILED|Failure" $O/gpu_test.log | head
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 --print-limit 5 $D/gpu_norms_test --gtest_filter='*Variants*/rmsnorm_bf16_wbf16_WnoB_resbf16_M67_N37_pad5:*VariantSpace*v1_N1000_fwd' --gtest_brief=1 > $O/san_synccheck.log 2>&1
echo "synccheck rc=$?"; grep -h "ERROR SUMMARY" $O/san_synccheck.log
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s54a $B/s55b $B/s55c -- \
  "ln||fwd bf16 256 512 1024 4096 16384" "lnh||fwd fp16 256 512" "ln32||fwd fp32 256 512" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|fwd bf16 256 512" "add|LNTUNE_SWEEP_RESIDUAL=1|fwd bf16 256 4096" \
  "m4k|LNTUNE_SWEEP_M=4096|fwd bf16 256 1024" "d1|LNTUNE_SWEEP_M=1|fwd bf16 4096"
s done
