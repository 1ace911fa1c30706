#!/usr/bin/env bash
# Call 3 (session 35, H200). m35 = main (1d24178); f35 = main + the
# fast-memory defaults (DeviceInfo::dram_bytes_per_sm_cycle, gen::
# fast_memory_default: the H200's own rules from calls 1-2). The driver's
# clocks (lntune info), then the defaults of both builds against each other,
# two rounds, at the shapes the rules change and one control.
source bench/gpu_call.sh
s "lntune info"
LD_LIBRARY_PATH=/usr/local/cuda/lib64:$B/f35 $B/f35/lntune info | head -4
s "A/B main -> fast-memory rules"
timeout 480 bash bench/gpu_ab.sh ab_call3 2 $B/m35 $B/f35 -- \
  "fwd||fwd bf16 12288 16384 32768 65536 131072 262144" \
  "fwdh||fwd fp16 16384 65536" \
  "bwd||bwd bf16 32768 65536 131072 262144" \
  "bwdh||bwd fp16 262144" \
  "bwd32||bwd fp32 262144" \
  "addln32|LNTUNE_SWEEP_RESIDUAL=1|bwd fp32 256 1024 2048 4096 8192" \
  "addrms32|LNTUNE_SWEEP_RESIDUAL=1 LNTUNE_SWEEP_OP=rmsnorm|bwd fp32 512 4096 8192" \
  "ctl||fwd bf16 8192"
s done
