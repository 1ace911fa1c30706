#!/usr/bin/env bash
# Call 7 (session 38). s38f = main: the unguarded passes only where call 6
# measured them faster (wide_unguarded). s38d against s38f, two rounds; the
# tables of s38f; then the GPU suites and racecheck of the wide tests.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s38f
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab_call7 2 $B/s38d $B/s38f -- \
  "ln||bwd bf16 12288 16384 65536 131072" "ln32||bwd fp32 262144" \
  "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 16384 65536" \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384" \
  "addrms|LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 16384 32768" \
  "train||train bf16 8192 16384"
s "tables"
STEP_SECONDS=150 TABLES="ext bandwidth norms" OUT=$O timeout 400 bash bench/gpu_tables.sh $B/s38f call7; echo "tables rc=$?"
s "suites and racecheck"
( timeout 300 compute-sanitizer --tool racecheck --error-exitcode 9 $B/s38f/gpu_norms_test --gtest_filter='Norms.WideBackwardAtTwoCtasASm' > $O/racecheck_call7.log 2>&1; echo "racecheck rc=$?" > $O/racecheck_rc_call7.log ) &
OUT=$O bash bench/gpu_suites.sh $B/s38f s38f; echo "suites rc=$?"
wait; cat $O/racecheck_rc_call7.log; grep -E "RACECHECK SUMMARY|OK \]|FAILED" $O/racecheck_call7.log | head -3
s done
