#!/usr/bin/env bash
# Call 13 (session 36, H200). The add + RMSNorm bf16 backward at N = 8192
# measured 80.5% of copy in call 10's table where session 35 (and 34) had
# 88.1, with the same default config: session 35's last build (f35h) and
# this one (s36g) in bench_norms.py, add + RMSNorm bf16, one after the other.
source bench/gpu_call.sh
export PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
for b in f35h s36g; do
  s "$b"
  LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/$b LNTUNE_LIBRARY=$B/$b/liblntune.so timeout 110 \
    python3 bench/bench_norms.py --section bandwidth --ops add_rms --dtypes bf16 --providers lntune,torch --out /tmp/n_$b > $O/addrms_${b}_call13.log 2>&1; echo "$b rc=$?"
  grep -h "| bf16 |.*| bwd |" /tmp/n_$b/*.md | awk -F'|' '{print $6, $7, $9}'
done
s done
