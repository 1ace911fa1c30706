#!/usr/bin/env bash
# Call 8 (session 48). Call 7: LayerNorm bf16 N = 512's default (512
# threads, 32 a row: 16 elements a thread) 96.6% of copy, the space's best
# 97.8 (16 threads a row: 32 elements a thread, 32 rows a CTA), and every
# 16-thread-a-row config 97.0-97.8. Every config of the other 16-bit
# forwards of 256-512 columns (the same rule, gen::default_config's
# wide_cta), x = 512 MiB and M = 4096.
source bench/gpu_call.sh
use s48b
s sweeps
sw ln16_256 60 fwd bf16 256
sw lnh_256 60 fwd fp16 256
sw lnh_512 60 fwd fp16 512
(export LNTUNE_SWEEP_OP=rmsnorm; sw rms16_256 60 fwd bf16 256)
(export LNTUNE_SWEEP_OP=rmsnorm; sw rms16_512 60 fwd bf16 512)
(export LNTUNE_SWEEP_M=4096; sw ln16_512m4k 60 fwd bf16 512)
(export LNTUNE_SWEEP_M=4096; sw ln16_256m4k 60 fwd bf16 256)
s done
