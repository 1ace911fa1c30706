#!/usr/bin/env bash
# Call 8 (session 37). The training-size rule between the powers of two it
# was measured at (bf16 M = 4096, N = 1536-3584: block 2048 or 4096 over
# part-empty rows), s37b (the rule before) against s37g; every config of
# RMSNorm bf16 at M = 4096 (not under the rule).
source bench/gpu_call.sh
s "A/B"
OUT=$O bash bench/gpu_ab.sh ab_call8 2 $B/s37b $B/s37g -- "train||train bf16 768 1536 2560 3072 3584" > /dev/null 2>&1; echo "ab rc=$?"
grep -E "M=4096 +default" $O/ab_call8.log | sed -E 's/ +/ /g' | awk '{print $6,$1,$2,$9,$13}' | sort -k1,1 -k2,3
s "every config, RMSNorm train"
LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s37g LNTUNE_SWEEP_OP=rmsnorm LNTUNE_SWEEP_EVERY=1 timeout 120 $B/s37g/lntune_sweep train bf16 1024 2048 4096 > $O/every_rms_train_call8.log 2>&1; echo "rc=$?"
python3 - $O/every_rms_train_call8.log <<'PY'
import re,sys
rows=[]
for line in open(sys.argv[1]):
    m=re.match(r"\s+(block_size=.*?)\s+([\d.]+) us\s+([\d.]+)% of copy",line)
    if m: rows.append((m.group(1),float(m.group(2)),float(m.group(3))))
    m2=re.match(r"train\s+\S+\s+N=(\d+)\s+M=",line)
    if m2:
        print(line.rstrip()[:150])
        rows.sort(key=lambda r:r[1]); print("N=%s top:"%m2.group(1))
        for r in rows[:4]: print("  %-72s %7.1f us %5.1f%%"%r)
        rows=[]
PY
s done
