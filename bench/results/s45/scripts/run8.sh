#!/usr/bin/env bash
# Call 8 (session 45). s45f: call 7's RMSNorm backward at M = 4096, N =
# 1024 ran 0.30x PyTorch end to end (quick grid): host time per call of
# RMSNorm and add + RMSNorm (bench_norms.py --section host), and the quick
# grid's RMSNorm bf16 again.
source bench/gpu_call.sh
use s45f
export LNTUNE_LIBRARY="$D/liblntune.so" PYTHONPATH="$PWD/python" TORCH_EXTENSIONS_DIR=/tmp/te
s "ext"
timeout 80 python3 -c "import torch, lntune.torch as lt
x = torch.randn(4, 64, device='cuda', requires_grad=True)
lt.RMSNorm(64).cuda()(x).sum().backward()
print('extension', 'built' if lt._ext is not None else 'absent (ctypes path)')"
s "host"
timeout 75 python3 bench/bench_norms.py --section host --ops rms,add_rms --out $O/host > $O/host.log 2>&1; echo "host rc=$?"
grep "^host\|host " $O/host.log | head -20
s "grid rms bf16 again"
timeout 30 python3 bench/bench_norms.py --section grid --quick --ops rms --dtypes bf16 --out $O/grid > $O/grid.log 2>&1; echo "grid rc=$?"
grep "bwd" $O/grid/norms.md | head
s done
