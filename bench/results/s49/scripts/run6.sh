#!/usr/bin/env bash
# Call 6 (session 49). s49e (s49d with three fused cases at training sizes
# in gpu_norms_test's Variants): the GPU suites and the binding's pytest.
source bench/gpu_call.sh
s suites
PYTEST=1 OUT=$O timeout 540 bash bench/gpu_suites.sh $B/s49e s49e; echo "suites rc=$?"
grep -hE "^\[  (PASSED|FAILED) |passed|failed" $O/*_s49e.log | head -20
s done
