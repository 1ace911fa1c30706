#!/usr/bin/env bash
# Call 6 (session 45). s45f = s45e with the one-cluster-per-two-SMs grid at
# 16384 columns only (call 5: 13312 lost, 90.7 -> 79.0). The A/B s45e ->
# s45f, the GPU suites, the LayerNorm bandwidth table.
source bench/gpu_call.sh
use s45f
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab6 1 $B/s45e $D -- "b16k||bwd bf16 13312 14336 16384" | grep -v copy; echo "ab rc=$?"
s "suites"
OUT=$O bash bench/gpu_suites.sh $D s45f; echo "suites rc=$?"
grep -hE "tests ran|PASSED|FAILED" $O/*_s45f.log | head -20
s "bandwidth table"
STEP_SECONDS=120 TABLES="ext bandwidth" OUT=$O bash bench/gpu_tables.sh $D s45f; echo "tables rc=$?"
s done
