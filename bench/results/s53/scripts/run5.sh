#!/usr/bin/env bash
# Call 5 (session 53). The bandwidth regime's forward in the Python harness
# against two copies in one process each: --copy-mib 1024 (the harness's
# default: a copy moving 2 GiB) and --copy-mib 512 (the bytes the forward
# moves at x = 512 MiB: 512 MiB read, 512 MiB written; lntune_sweep's copy).
# The harness read 95-96 where lntune_sweep reads 97-98 at 256 and 16384
# columns (session 52); this asks how much of that is the copy's size. The
# defaults (cache off), main (s53a).
source bench/gpu_call.sh
use s53a
ext
for c in 1024 512; do
  s "layernorm copy $c"
  timeout 170 python3 bench/bench_layernorm.py --no-plots --section bandwidth --dtypes fp16,bf16,fp32 \
    --providers lntune-default --copy-mib $c --out $O/ln_copy$c > $O/ln_copy$c.log 2>&1; echo "rc=$?"
  grep -iE "device-to-device copy" $O/ln_copy$c.log
done
s "norms copy 512"
timeout 120 python3 bench/bench_norms.py --section bandwidth --dtypes bf16 --providers lntune \
  --copy-mib 512 --out $O/norms_copy512 > $O/norms_copy512.log 2>&1; echo "rc=$?"
s done
