#!/usr/bin/env bash
# Call 6 (session 48). The GPU suites on s48b (main's kernels at the end of
# the session): gpu_norms_test in 4 shards, gpu_test, tuner_gpu_test, and the
# binding's pytest (PYTEST=1).
source bench/gpu_call.sh
PYTEST=1 OUT=$O bash bench/gpu_suites.sh $B/s48b s48b; echo "suites rc=$?"
