#!/usr/bin/env bash
# Call 8 (session 39). s39f = main (s39e + the fp16 LayerNorm backward of
# more than 128K columns at 3 stages). A/B against s39e, two rounds, and
# the wide backward's test on s39f.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab8 2 $B/s39e $B/s39f -- "def||bwd fp16 262144" "def||bwd bf16 262144"
s "tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39f
timeout 200 $B/s39f/gpu_test --gtest_filter='Gpu.WideBackwardConfigs*' > $O/gputests_call8.log 2>&1; echo "gpu_test rc=$?"
grep -E "wide |FAILED|Failure|PASSED" $O/gputests_call8.log | head
s done
