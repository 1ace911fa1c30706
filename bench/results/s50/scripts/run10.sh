#!/usr/bin/env bash
# Call 10 (session 50). s50j (every rule of the session, the new Variants):
# the GPU suites and the binding's pytest.
source bench/gpu_call.sh
s suites
PYTEST=1 OUT=$O timeout 560 bash bench/gpu_suites.sh $B/s50j s50j; echo "suites rc=$?"
grep -hE "^\[  (PASSED|FAILED) |passed|failed" $O/*_s50j.log | head -20
s done
