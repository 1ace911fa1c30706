#!/usr/bin/env bash
# Installs what lntune needs to build and test, on Debian/Ubuntu with the CUDA
# toolkit (for NVRTC and cuda.h) under /usr/local/cuda or on PATH.
set -euo pipefail
pkgs=(cmake ninja-build g++ libsqlite3-dev libgtest-dev libcli11-dev python3)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null && [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "lntune: the CUDA toolkit (NVRTC) was not found; install it (https://developer.nvidia.com/cuda-downloads)" >&2
  exit 1
fi
