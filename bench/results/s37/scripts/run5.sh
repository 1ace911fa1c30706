#!/usr/bin/env bash
# Call 5 (session 37). Which half of call 4's s37c cost the bandwidth regime
# 6-14 points: s37d = the in-kernel finish by warps (fewer than 512 threads
# again) + the row slots' own barriers; s37e = the same + the streaming
# loads and stores, no slot barriers. A/B against s37b; then the finish
# test (mended) and every config at M = 4096 with each.
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab_call5 2 $B/s37b $B/s37d $B/s37e -- \
  "bw||bwd bf16 256 1024 4096" "rms|LNTUNE_SWEEP_OP=rmsnorm|bwd bf16 1024 4096" \
  "bw32||bwd fp32 1024 4096" > /dev/null 2>&1; echo "ab rc=$?"
grep -E " default " $O/ab_call5.log | sed -E 's/ +/ /g' | awk '{for(i=1;i<=NF;i++) if ($i ~ /%$/) {print $3,$4,$5,$1,$2,$i; break}}' | sort -k1,3 -k4,5
s "tests"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37d
timeout 60 $B/s37d/gpu_test --gtest_filter='Gpu.WarpFinish*:Gpu.FinishEntry*' > $O/tests_call5.log 2>&1; echo "gpu_test rc=$?"
grep -E "FAILED|Failure|PASSED" $O/tests_call5.log | head
s "every config, train"
for b in s37d s37e; do
  LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/$b LNTUNE_SWEEP_EVERY=1 timeout 100 $B/$b/lntune_sweep train bf16 1024 2048 4096 > $O/every_train_${b}_call5.log 2>&1; echo "$b every rc=$?"
  python3 - $O/every_train_${b}_call5.log <<'PY'
import re,sys
rows=[]
for line in open(sys.argv[1]):
    m=re.match(r"\s+(block_size=.*?)\s+([\d.]+) us\s+([\d.]+)% of copy",line)
    if m: rows.append((m.group(1),float(m.group(2)),float(m.group(3))))
    m2=re.match(r"train\s+\S+\s+N=(\d+)\s+M=",line)
    if m2:
        rows.sort(key=lambda r:r[1]); print("N=%s top:"%m2.group(1))
        for r in rows[:4]: print("  %-72s %7.1f us %5.1f%%"%r)
        rows=[]
PY
done
s done
