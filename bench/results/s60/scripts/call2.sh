#!/usr/bin/env bash
# Call 2 (session 60). The cold tune of the default grid on s60b (main with
# training-rules-2.patch's eight rules, all of which won call 1's A/B), then
# the pytest half of the GPU suites on the same build.
source bench/gpu_call.sh
use s60b
s cold
cold_tune
s pytest
PYTEST=1 GTEST=0 OUT=$O bash bench/gpu_suites.sh $B/s60b s60b 2>&1 | tail -n 30
s done
