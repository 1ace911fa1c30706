#!/usr/bin/env bash
# Call 12 (session 36, H200). Call 11 compared two builds that both had the
# slab-over-clusters-of-8 forward at 262144 (s36f came after it). This one:
# s36d (the wide forward at 262144) against s36g in the Python harness,
# alternated, two rounds.
source bench/gpu_call.sh
export PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "extension"
LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36g LNTUNE_LIBRARY=$B/s36g/liblntune.so timeout 120 python3 -c "import torch, lntune.torch as lt; print(lt._ext is not None)"
s "A/B in the Python harness"
for r in 1 2; do
  for b in s36d s36g; do
    for dt in bf16 fp16; do
      LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/$b LNTUNE_LIBRARY=$B/$b/liblntune.so timeout 60 \
        python3 bench/probes/ln_forward_probe.py 1024 262144 $dt "$b r$r"
    done
  done
done 2>&1 | tee $O/pyab_call12.log
s done
