#!/usr/bin/env bash
# Call 4 (session 38). s38d = main (the two-CTAs-a-SM default, lntune_sweep's
# random inputs). The GPU suites, and beside them compute-sanitizer memcheck,
# racecheck and synccheck of Norms.WideBackwardAtTwoCtasASm (every variant of
# the wide backward at two CTAs a SM).
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s38d
N=$B/s38d/gpu_norms_test
F='Norms.WideBackwardAtTwoCtasASm'
( for tool in memcheck racecheck synccheck; do
    timeout 400 compute-sanitizer --tool $tool --error-exitcode 9 $N --gtest_filter=$F > $O/${tool}_call4.log 2>&1; echo "$tool rc=$?" >> $O/sanitizers_call4.log
  done ) &
san=$!
s "suites"
OUT=$O bash bench/gpu_suites.sh $B/s38d s38d; echo "suites rc=$?"
s "sanitizers"
wait $san
cat $O/sanitizers_call4.log
for tool in memcheck racecheck synccheck; do grep -E "ERROR SUMMARY|RACECHECK SUMMARY|two/SM|OK \]|FAILED" $O/${tool}_call4.log | head -9; done
s done
