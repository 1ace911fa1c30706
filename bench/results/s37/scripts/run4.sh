#!/usr/bin/env bash
# Call 4 (session 37). s37c = s37b + the backward's row slots freed from the
# CTA barrier (row_sum2's slot barriers) and its streaming loads and stores
# (single tile, no cluster: bwd_dx.cuh bwd_streams). Tests; A/B s37b vs
# s37c of the defaults (x = 512 MiB and M = 4096); every config at M = 4096.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37c
s "tests"
timeout 170 $B/s37c/gpu_test --gtest_filter='Gpu.WarpFinish*:Gpu.*Finish*:Gpu.BackwardIsBitwise*:Gpu.WideBackward*:Gpu.ForwardAndBackwardMatchReference/*' > $O/tests_call4.log 2>&1; echo "gpu_test rc=$?"
grep -E "FAILED|Failure|PASSED" $O/tests_call4.log | head
timeout 150 $B/s37c/gpu_norms_test > $O/norms_call4.log 2>&1; echo "gpu_norms_test rc=$?"
grep -E "FAILED|Failure|PASSED" $O/norms_call4.log | head
s "A/B defaults"
OUT=$O bash bench/gpu_ab.sh ab_call4 2 $B/s37b $B/s37c -- \
  "bw||bwd bf16 256 1024 4096 16384" "bw32||bwd fp32 256 1024 4096 16384" \
  "train||train bf16 1024 2048 4096" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1024 4096" \
  "addln|LNTUNE_SWEEP_RESIDUAL=1|bwd bf16 1024 4096" 2>&1 | tail -40
s "every config, train"
LNTUNE_SWEEP_EVERY=1 timeout 200 $B/s37c/lntune_sweep train bf16 1024 2048 4096 > $O/every_train_call4.log 2>&1; echo "every rc=$?"
python3 - $O/every_train_call4.log <<'PY'
import re,sys
rows=[]
for line in open(sys.argv[1]):
    m=re.match(r"\s+(block_size=.*?)\s+([\d.]+) us\s+([\d.]+)% of copy",line)
    if m: rows.append((m.group(1),float(m.group(2)),float(m.group(3))))
    if line.startswith("train"): print(line.rstrip()[:260])
    m2=re.match(r"train\s+\S+\s+N=(\d+)\s+M=",line)
    if m2:
        rows.sort(key=lambda r:r[1]); print("N=%s top:"%m2.group(1))
        for r in rows[:6]: print("  %-72s %7.1f us %5.1f%%"%r)
        rows=[]
PY
s done
