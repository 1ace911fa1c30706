#!/usr/bin/env bash
# Call 5 (session 48). s48b = main's kernels at the end of the session (the
# cluster forward's whole stores), with the harness's reading L2 flush
# (11c2999): the benchmark tables at x = 512 MiB (LayerNorm against
# PyTorch; RMSNorm and the fused forms) and the M = 4096 backward kernels.
source bench/gpu_call.sh
STEP_SECONDS=200 TABLES="ext bandwidth train norms" OUT=$O bash bench/gpu_tables.sh $B/s48b s48b; echo "tables rc=$?"
for f in $O/*_s48b.md; do echo "== $f"; grep -E "^\| (256|1024|16384|65536|262144) " $f | head -60; done 2>/dev/null | head -120
