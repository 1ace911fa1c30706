#!/usr/bin/env bash
# Call 1: is %gridid distinct per launch (graph replays included), and what a
# tiny memset costs on the stream against a second kernel (bench/probes/gridid_probe.cu).
nvidia-smi --query-gpu=name --format=csv,noheader
.devbuild/s28/gridid_probe 2>&1 | tee $OUT/gridid_call1.log
