#!/usr/bin/env bash
# Call 5 (session 49). s49d: the fused backward of 16-bit rows of 257-2048
# columns at training sizes takes the plain LayerNorm's training rule (two
# CTAs a SM of 4 warps, 2 rows, to 1024 columns; 8 warps, 2 rows, one CTA
# a SM at 2048), finishing dW/dB in the kernel (space.cpp,
# fast_memory_bwd_default). Its cases (every config at 1000-2002 columns,
# gpu_test's finish tests, memcheck on a fused variant and on the 16-row
# finish), then its defaults A/B'd against s49c.
source bench/gpu_call.sh
use s49d
s cases
cases 170 '*VariantSpace*N1000_bwd_dx:*VariantSpace*N2002_bwd_dx:*Variants*' '*VariantSpace*v1_N1000_bwd_dx'
timeout 150 $D/gpu_test --gtest_filter='Gpu.*Finish*:Gpu.BackwardIsBitwise*' > $O/gpu_test_finish.log 2>&1; echo "gpu_test rc=$?"
grep -hE "checked|FAILED|PASSED|Failure" $O/gpu_test_finish.log | head
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 $D/gpu_test --gtest_filter='Gpu.WarpFinishSumsManyPartialRows' --gtest_brief=1 > $O/san_finish.log 2>&1; echo "memcheck finish rc=$?"; grep -h "ERROR SUMMARY" $O/san_finish.log
s defaults
OUT=$O bash bench/gpu_ab.sh ab 2 $B/s49c $B/s49d -- \
  "res|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd bf16 512 768 1024 2048" \
  "resh|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd fp16 1024" \
  "rres|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=4096|bwd bf16 512 1024 2048" \
  "res32|LNTUNE_SWEEP_RESIDUAL=fp32 LNTUNE_SWEEP_M=4096|bwd bf16 1024 2048" \
  "res6k|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_M=6336|bwd bf16 1024" \
  "plain|LNTUNE_SWEEP_M=4096|bwd bf16 1024"
s done
