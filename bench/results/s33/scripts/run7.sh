#!/usr/bin/env bash
# Call 7 (session 33, H200): bench/probes/mbarrier_synccheck's `wide` case
# (the wide backward's row-sum push over clusters of 16, alone) under
# synccheck: 7 clusters, 8 clusters (more than run at one CTA per SM: CTAs
# of one cluster may share an SM), 8 clusters with 120000 bytes of padding
# (one CTA per SM). Built here with nvcc -arch=sm_90 -O2 (.devbuild/probe).
set -uo pipefail
P=$PWD/.devbuild/probe/mbarrier_synccheck
O=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for args in "wide 7" "wide 8" "wide 8 120000" "wide 16" "push" "late"; do
  echo "--- $args"
  timeout 60 $P $args
  timeout 60 compute-sanitizer --tool synccheck --print-limit 2 $P $args 2>&1 | grep -E "Missing|block \(|address|SUMMARY|: ok|wrong" | head -8
done 2>&1 | tee $O/probe_call7.log
