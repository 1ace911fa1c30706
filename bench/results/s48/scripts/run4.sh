#!/usr/bin/env bash
# Call 4 (session 48). The Python harness's L2 flush: triton.testing.do_bench
# zeroes a 256 MB buffer before each repetition, leaving the L2 full of
# dirty lines whose write-back lands in the timed call (the tuner's flush
# reads instead: flush.cuh). Prediction: a fixed ~50 MB of writes costs the
# forward at x = 512 MiB (1 GiB moved) about twice what it costs the
# 1024 MiB copy (2 GiB), so the forward's % of copy rises by ~2 points with
# the reading flush (lntune_sweep's 97-98 against the harness's 95-96), the
# backward's (1.5 GiB) by ~1; PyTorch's ratios move alike. Each flush in its
# own process, twice, alternating.
source bench/gpu_call.sh
use s48b
ext
for r in 1 2; do
  for f in zero read; do
    s "bandwidth flush=$f round $r"
    timeout 150 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes bf16,fp32 \
      --bandwidth-ns 256,1024,16384,65536 --providers lntune-default,torch --l2-flush $f --out $O/flush_${f}_$r \
      > $O/flush_${f}_$r.log 2>&1; echo "rc=$?"
    grep -E "copy:|bandwidth" $O/flush_${f}_$r.log | cut -c1-160 | head -20
  done
done
s done
