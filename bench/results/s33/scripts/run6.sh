#!/usr/bin/env bash
# Call 6 (session 33, H200). s33n = s33g + the launcher's bandwidth-regime
# rule (M bucket 5: only its own records within 1.5x of the call's N, else
# the default heuristic; call 5: N = 512 and 2048, twice a tuned N away,
# took 82% of copy where the default has 99%). The default grid's bf16 keys
# tuned cold, then the bf16 RMSNorm / fused table with that cache.
set -uo pipefail
B=$PWD/.devbuild
G=$B/s33n
O=${OUT:-/tmp}
s() { echo "=== $1 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$G LNTUNE_LIBRARY=$G/liblntune.so PYTHONPATH=$PWD/python TORCH_EXTENSIONS_DIR=/tmp/te
db=/tmp/h200_s33n.db; rm -f $db
s "cold tune of the default grid, bf16"
t0=$(date +%s); timeout 150 $G/lntune tune --db $db --dtype bf16 --budget 130 > /tmp/tune.log 2>&1
echo "tune rc=$? in $(( $(date +%s) - t0 )) s"; grep -E "keys:|wall time" /tmp/tune.log; cp /tmp/tune.log $O/tune_call6.log
s "extension"
timeout 120 python3 -c "import torch, lntune.torch as lt; x = torch.randn(4, 64, device='cuda', requires_grad=True); lt.RMSNorm(64).cuda()(x).sum().backward(); print('ext', lt._ext is not None)"
s "norms bf16 with the cache"
LNTUNE_CACHE=$db timeout 120 python3 bench/bench_norms.py --section bandwidth --dtypes bf16 --out /tmp/nb > $O/norms_call6.log 2>&1; echo "norms rc=$?"
cp /tmp/nb/norms.md $O/norms_call6.md
grep -E "RMSNorm \| bf16 \| - " /tmp/nb/norms.md
s done
