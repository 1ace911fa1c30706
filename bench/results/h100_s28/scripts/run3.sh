#!/usr/bin/env bash
# Call 3: the cost of a grid barrier in a cooperative launch (bench/probes/grid_barrier_probe.cu).
.devbuild/s28/grid_barrier_probe 2>&1 | tee $OUT/grid_barrier_call3.log
