#!/usr/bin/env bash
# Call 11 (session 36, H200). The 16-bit forward at 262144 columns measured
# 79% in the Python bench (call 10) where session 35's wide forward measured
# 80-82% there, while lntune_sweep has the new slab-over-clusters-of-8
# default 6 points ahead (call 5). Both libraries in the Python harness,
# alternated, two rounds: s36f (the wide forward at 262144) against s36g.
source bench/gpu_call.sh
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/s36g PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
s "extension"
LNTUNE_LIBRARY=$B/s36g/liblntune.so timeout 120 python3 -c "import torch, lntune.torch as lt; print(lt._ext is not None)"
s "A/B in the Python harness"
for r in 1 2; do
  for b in s36f s36g; do
    for n in 262144 65536; do
      for dt in bf16 fp16; do
        LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/$b LNTUNE_LIBRARY=$B/$b/liblntune.so timeout 60 \
          python3 bench/probes/ln_forward_probe.py $((536870912 / (n * 2))) $n $dt "$b r$r"
      done
    done
  done
done 2>&1 | tee $O/pyab_call11.log
s done
