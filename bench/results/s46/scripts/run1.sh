#!/usr/bin/env bash
# Call 1 (session 46). s46a (HEAD cbd9f43): where the end-to-end backward's
# time goes at M = 4096 (RMSNorm 0.30-0.73x PyTorch at N = 1024 in session
# 45's grid): bench/probes/variant_bwd_timeline.py.
source bench/gpu_call.sh
use s46a
s "ext"
ext
s "timeline"
timeout 200 python3 bench/probes/variant_bwd_timeline.py --ops rms,add_rms,add_ln --ns 1024,4096 > $O/timeline.log 2>&1; echo "timeline rc=$?"
grep -E "do_bench|rc=" $O/timeline.log
s done
