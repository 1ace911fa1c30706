#!/usr/bin/env bash
# Call 12 (session 51). The tutorial grid end to end, small M and host time
# again on s51h (the finish's register bound fixed, call 11).
source bench/gpu_call.sh
STEP_SECONDS=150 TABLES="ext grid" OUT=$O timeout 200 bash bench/gpu_tables.sh $B/s51h s51h; echo "tables rc=$?"
