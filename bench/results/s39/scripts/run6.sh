#!/usr/bin/env bash
# Call 6 (session 39). The GPU suites of s39e (main), and beside them
# compute-sanitizer memcheck, racecheck and synccheck of the wide forward
# over 245768 columns (clusters of 16: full slabs on the one-pass statistics,
# the last CTA's partial slab on the two passes; every shared-memory and
# wide config of the case) and memcheck of every fifth wide backward config
# (the weight slab by 16-byte pieces; fp32 weight beside fp16 rows among them).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s39e
N=$B/s39e/gpu_norms_test
F='Norms/SmemForward.EveryConfigIsCorrect/ln_bf16_N245768'
( for tool in memcheck racecheck synccheck; do
    timeout 400 compute-sanitizer --tool $tool --error-exitcode 9 $N --gtest_filter=$F > $O/${tool}_call6.log 2>&1; echo "$tool rc=$?" >> $O/sanitizers_call6.log
  done
  LNTUNE_TEST_WIDE_STRIDE=5 timeout 400 compute-sanitizer --tool memcheck --error-exitcode 9 $B/s39e/gpu_test --gtest_filter='Gpu.WideBackwardConfigs*' > $O/memcheck_bwd_call6.log 2>&1; echo "memcheck bwd rc=$?" >> $O/sanitizers_call6.log ) &
san=$!
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s39e s39e; echo "suites rc=$?"
s "sanitizers"
wait $san
cat $O/sanitizers_call6.log
for f in $O/memcheck_call6.log $O/racecheck_call6.log $O/synccheck_call6.log $O/memcheck_bwd_call6.log; do grep -E "ERROR SUMMARY|RACECHECK SUMMARY|smem fwd|wide |OK \]|FAILED" $f | head -5; done
s done
