#!/usr/bin/env bash
# Call 1 (session 51). Session 50's two waiting patches that change rules
# in generator/space.cpp, applied together as s51b (s51a = main, b0c45c7):
# past48-neighbours.patch and addrms-fwd-4096.patch, each through its own
# call script (bench/results/s51/scripts/*.sh, bench/experiments/run-*.sh when it ran), logs in call1/p48 and call1/addrms.
set -uo pipefail
base=${OUT:-/tmp}
mkdir -p $base/p48 $base/addrms
OUT=$base/p48 bash bench/results/s51/scripts/past48_neighbours.sh s51a s51b
OUT=$base/addrms bash bench/results/s51/scripts/addrms_fwd_4096.sh s51a s51b
