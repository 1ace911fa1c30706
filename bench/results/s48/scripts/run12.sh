#!/usr/bin/env bash
# Call 12 (session 48, after the review). The Python harness after
# timing.flushed_ms became the one timed loop (do_bench's repetitions,
# the paired batches): LayerNorm bf16 1024 at x = 512 MiB with each flush,
# and RMSNorm bf16 1024 at x = 512 MiB with 3 paired rounds.
source bench/gpu_call.sh
use s48c
ext
for f in read zero; do
  timeout 60 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes bf16 --bandwidth-ns 1024 \
    --providers lntune-default,torch --l2-flush $f --out $O/ln_$f > $O/ln_$f.log 2>&1; echo "ln $f rc=$?"
  grep -E "copy:|bandwidth" $O/ln_$f.log | cut -c1-170
done
timeout 80 python3 bench/bench_norms.py --section bandwidth --bandwidth-ns 1024 --ops rms --dtypes bf16 --paired 3 --out $O/rms \
  > $O/rms.log 2>&1; echo "norms rc=$?"; grep -E "N=1024" $O/rms.log | cut -c1-200 | head -3
