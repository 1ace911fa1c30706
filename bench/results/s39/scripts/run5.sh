#!/usr/bin/env bash
# Call 5 (session 39). s39e = main (s39d + the H200 defaults: bf16
# LayerNorm forward of more than 128K columns in the wide forward's clusters
# of 16, the 16-bit LayerNorm backward with an fp32 weight in clusters of 8
# at 2 stages and two CTAs a SM). A/B against s39d (two rounds), then the
# tables (LayerNorm and the norms at x = 512 MiB against PyTorch).
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab5 2 $B/s39d $B/s39e -- \
  "def||fwd bf16 262144" "w|LNTUNE_SWEEP_W=fp32|bwd bf16 65536" "def||fwd fp16 262144"
s "tables"
STEP_SECONDS=150 TABLES="ext bandwidth norms" OUT=$O bash bench/gpu_tables.sh $B/s39e s39e; echo "tables rc=$?"
s done
