#!/usr/bin/env bash
# Call 1 (session 46). s46a (HEAD cbd9f43): where the end-to-end backward's
# time goes at M = 4096 (RMSNorm 0.30-0.73x PyTorch at N = 1024 in session
# 45's grid): bench/probes/variant_bwd_timeline.py.
source bench/gpu_call.sh
use s46a
export LNTUNE_LIBRARY="$D/liblntune.so" PYTHONPATH="$PWD/python" TORCH_EXTENSIONS_DIR=/tmp/te
s "ext"
timeout 120 python3 -c "import torch, lntune.torch as lt
x = torch.randn(4, 64, device='cuda', requires_grad=True)
lt.RMSNorm(64).cuda()(x).sum().backward()
print('extension', 'built' if lt._ext is not None else 'absent (ctypes path)')"
s "timeline"
timeout 200 python3 bench/probes/variant_bwd_timeline.py --ops rms,add_rms,add_ln --ns 1024,4096 > $O/timeline.log 2>&1; echo "timeline rc=$?"
grep -E "do_bench|rc=" $O/timeline.log
s done
