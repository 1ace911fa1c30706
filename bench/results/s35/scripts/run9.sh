#!/usr/bin/env bash
# Call 9 (session 35, H200). The new GPU test SmemForwardExactness.
# ConstantRowsGiveTheBias (every shared-memory and wide-row forward config,
# constant rows: y = bias bit for bit) on old35 (80cc665's fwd_wide fix
# undone: it must fail) and f35f (with it: it must pass).
source bench/gpu_call.sh
for b in old35 f35f; do
  s "$b"
  LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/$b timeout 150 $B/$b/gpu_norms_test --gtest_filter='SmemForwardExactness.*' > $O/exact_$b.log 2>&1
  echo "$b rc=$?"; grep -E "exact  |PASSED|FAILED  \]|Which is" $O/exact_$b.log | head -8
done
s done
