#!/usr/bin/env bash
# Call 11 (session 50). The tables on s50j: the M = 4096 backward
# (lntune_sweep train), lntune.torch end to end on the tutorial's grid,
# host time per call, small M.
source bench/gpu_call.sh
use s50j
s tables
STEP_SECONDS=150 TABLES="ext train grid" OUT=$O timeout 320 bash bench/gpu_tables.sh $D s50j; echo "tables rc=$?"
s done
