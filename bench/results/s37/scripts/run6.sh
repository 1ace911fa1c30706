#!/usr/bin/env bash
# Call 6 (session 37). s37f = main at eb33e06 (the in-kernel finish by
# warps, the row slots' own barriers, the training-size default). The GPU
# suites; memcheck of the new finish; the M = 4096 table (every dtype) and
# the end-to-end grid through lntune.torch. Logs in call6.tgz.
source bench/gpu_call.sh
W=$O/w; mkdir -p $W
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37f
s "suites"
OUT=$W timeout 300 bash bench/gpu_suites.sh $B/s37f call6; echo "suites rc=$?"
s "memcheck"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $B/s37f/gpu_test --gtest_filter='Gpu.WarpFinish*' > $W/memcheck_call6.log 2>&1; echo "memcheck rc=$?"
tail -3 $W/memcheck_call6.log
s "tables"
STEP_SECONDS=150 TABLES="ext train grid" OUT=$W timeout 300 bash bench/gpu_tables.sh $B/s37f call6; echo "tables rc=$?"
cat $W/grid_call6.md 2>/dev/null | head -60
(cd $W && tar czf $O/call6.tgz .)
s done
