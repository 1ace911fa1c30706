#!/usr/bin/env bash
# Call 1 (session 56). The split-row forward probe at 262144 columns (rows
# split over the CTAs of a cooperative grid, statistics through global
# memory) against the library's default, alone on the GPU; then the gtest
# suites on main (s56a): the defaults changed after session 55's call 2.
source bench/gpu_call.sh
OUT=$O bash bench/experiments/run-split-row-probe.sh s56a
OUT=$O bash bench/gpu_suites.sh .devbuild/s56a s56a
s done
