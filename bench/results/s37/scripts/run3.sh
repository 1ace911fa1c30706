#!/usr/bin/env bash
# Call 3 (session 37). The finish tests again (s37b: call 2's two test
# mistakes mended), then the probe's variants: which of its differences from
# lntune's row slots (streaming hints, contiguous rows, teams free of the
# CTA barrier) make its dx faster.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37b
s "tests"
timeout 100 $B/s37b/gpu_test --gtest_filter='Gpu.WarpFinish*:Gpu.FinishEntry*' > $O/tests_call3.log 2>&1; echo "tests rc=$?"
grep -E "FAILED|OK \]|Failure" $O/tests_call3.log | head
s "probe variants"
timeout 200 $B/probe/bwd_team_probe > $O/probe_call3.log 2>&1; echo "probe rc=$?"
grep -E "copy|FAIL" $O/probe_call3.log | head -3
grep team $O/probe_call3.log | awk '{printf "%-40s %s %s %s | %s %s | %s %s\n", $2" "$3" "$4" "$5" "$6, $12,$13,$14, $18,$19, $25,$26}'
s done
