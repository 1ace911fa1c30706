#!/usr/bin/env bash
# Call 2 (session 56). The split-row probe again with its poison on the
# kernels' stream (call 1's checks raced the legacy stream's memsets), alone
# on the GPU; then the pytest suites on main (s56a).
source bench/gpu_call.sh
use s56a
s probe
timeout 200 $B/probe/split_row_fwd_probe > $O/split_probe.log 2>&1; echo "probe rc=$?"
cat $O/split_probe.log
PYTEST=1 GTEST=0 OUT=$O bash bench/gpu_suites.sh .devbuild/s56a s56a
s done
