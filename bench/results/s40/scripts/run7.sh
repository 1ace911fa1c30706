#!/usr/bin/env bash
# Call 7 (session 40; the device budget's last minutes). s40g = s40f with the
# 16-bit backward's rule of two CTAs a SM over as many 8192-column slabs as
# a row of 16385-65536 columns needs where the power of two would leave a
# CTA empty (3 at N = 20000, 5 at 40000, 7 at 50000; no residual). The
# default at N = 40000 against the reference and the wide backward's configs
# (every ninth; 40000 columns among them); A/B against s40f, two rounds.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s40g
s "tests"
timeout 60 $B/s40g/gpu_norms_test --gtest_filter='*M300_N40000*' > $O/tests_call7.log 2>&1; echo "norms rc=$?"
grep -E "FAILED|Failure|PASSED" $O/tests_call7.log | head -5
LNTUNE_TEST_WIDE_STRIDE=9 timeout 70 $B/s40g/gpu_test --gtest_filter='Gpu.WideBackwardConfigs*' > $O/gputests_call7.log 2>&1; echo "gpu_test rc=$?"
grep -E "wide |FAILED|Failure|PASSED" $O/gputests_call7.log | head -5
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab7 2 $B/s40f $B/s40g -- "bwd||bwd bf16 20000 40000 50000" "bwd||bwd fp16 40000"
s done
