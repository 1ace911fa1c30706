#!/usr/bin/env bash
# Call 1 (session 51). Session 50's two waiting patches that change rules
# in generator/space.cpp, applied together as s51b (s51a = main, b0c45c7):
# past48-neighbours.patch and addrms-fwd-4096.patch, each through its own
# call script (bench/experiments/run-*.sh), logs in call1/p48 and call1/addrms.
set -uo pipefail
base=${OUT:-/tmp}
mkdir -p $base/p48 $base/addrms
OUT=$base/p48 bash bench/experiments/run-past48-neighbours.sh s51a s51b
OUT=$base/addrms bash bench/experiments/run-addrms-fwd-4096.sh s51a s51b
