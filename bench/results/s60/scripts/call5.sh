#!/usr/bin/env bash
# Call 5 (session 60). s60d = s60b + rules-3 (call 4's three winners and the
# 16-bit LayerNorm forward of 8193-9216 columns on the 9216 tile in 9 warps)
# + the upload fix; the one-round LayerNorm forward of call 4 dropped. The
# new forward rule's A/B against s60b, two rounds, then the gtest half of
# the GPU suites on s60d.
source bench/gpu_call.sh
s ab
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s60b $B/s60d -- \
  "f4096|LNTUNE_SWEEP_M=4096|fwd bf16 8448 8704 9216" "f4096h|LNTUNE_SWEEP_M=4096|fwd fp16 8704 9216" \
  "f2200|LNTUNE_SWEEP_M=2200|fwd bf16 8704" "f8192|LNTUNE_SWEEP_M=8192|fwd bf16 8704"
s suites
OUT=$O bash bench/gpu_suites.sh $B/s60d s60d 2>&1 | grep -E " rc=|PASSED|FAILED" | head -n 30
s done
