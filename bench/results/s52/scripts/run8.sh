#!/usr/bin/env bash
# Call 8 (session 52, the last device minutes). Main with every rule of
# calls 1-7 (s52i, 0865f94): every Variants case against the float64
# reference (the suites of call 3 ran at 04c00a2), then the tables: the
# M = 4096 backward (train), the bandwidth regime against PyTorch, the grid
# (M = 4096 end to end, small M, host time).
source bench/gpu_call.sh
use s52i
s variants
timeout 100 $D/gpu_norms_test --gtest_filter='*Variants*' --gtest_brief=1 > $O/variants.log 2>&1; echo "variants rc=$?"
grep -hE "PASSED|FAILED|Failure" $O/variants.log | head
s tables
STEP_SECONDS=120 TABLES="ext train bandwidth grid" OUT=$O timeout 170 bash bench/gpu_tables.sh $D s52i
s done
