#!/usr/bin/env bash
# Call 1 (session 37). The team-per-row backward probe (bench/probes/
# bwd_team_probe.cu, built here with nvcc -arch=sm_90 -O3) at M = 4096,
# bf16 N = 1024 / 2048 / 4096, beside lntune's default pair (s36g, the
# session-36 defaults) in `lntune_sweep train`, each against its own copy.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36g
s "probe"
timeout 200 $B/probe/bwd_team_probe > $O/probe_call1.log 2>&1; echo "probe rc=$?"
s "lntune train"
LNTUNE_SWEEP_CONFIG=default timeout 120 $B/s36g/lntune_sweep train bf16 1024 2048 4096 > $O/train_call1.log 2>&1; echo "train rc=$?"
s "probe again (spread)"
timeout 200 $B/probe/bwd_team_probe > $O/probe2_call1.log 2>&1; echo "probe2 rc=$?"
cat $O/train_call1.log | grep -E "copy|train|default"
grep -E "copy|team|FAIL" $O/probe_call1.log
grep -E "team" $O/probe2_call1.log | awk '{print $2,$3,$4,$5, $13, $14, $20, $21, $27,$28}'
s done
