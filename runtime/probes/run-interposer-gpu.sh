#!/usr/bin/env bash
# The interposer on the real driver: cuGetProcAddress for every hooked name, the hook's GPU
# tests with the interposer, candle (cuBLAS matmul) and burn under it, and a preloaded shim
# beside it (its counts with the interposer against CUPTI, which rewrites nothing).
#
# Run on the GPU machine in a folder holding, built elsewhere: hook_proc_gpu, hook_gpu and
# hook_capture_gpu (`cargo test -p nosync --release --features cupti --no-run`, with
# CARGO_PROFILE_RELEASE_DEBUG=line-tables-only CARGO_PROFILE_RELEASE_STRIP=none), the probes
# nosync-probe-candle and nosync-probe-burn (build-gpu-apps.sh), and libshim.so
# (probes/shim/shim.c), each alone or in *.tar.xz archives. Logs go to $OUT.
#
#   OUT=logs bash run-interposer-gpu.sh DIR
cd "${1:-$(dirname "$0")}"
for a in *.tar.xz; do tar -xJf "$a"; done
export LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
run() { local log=$1; shift; echo "== $*" >"$OUT/$log"; timeout 240 "$@" >>"$OUT/$log" 2>&1; echo "exit $?" >>"$OUT/$log"; echo "$log: $(tail -n 1 "$OUT/$log")"; }
run proc.log ./hook_proc_gpu --include-ignored --test-threads=1 --nocapture
NOSYNC_TEST_HOOK=interpose run hook_gpu.log ./hook_gpu --include-ignored --test-threads=1 --nocapture
NOSYNC_TEST_HOOK=interpose run capture_gpu.log ./hook_capture_gpu --include-ignored --test-threads=1
if [ -x nosync-probe-candle ]; then
  run candle.log ./nosync-probe-candle
  LD_PRELOAD=$PWD/libshim.so run candle-shim.log ./nosync-probe-candle
  NOSYNC_HOOK=cupti LD_PRELOAD=$PWD/libshim.so run candle-shim-cupti.log ./nosync-probe-candle
fi
if [ -x nosync-probe-burn ]; then
  run burn.log ./nosync-probe-burn
  LD_PRELOAD=$PWD/libshim.so run burn-shim.log ./nosync-probe-burn
fi
grep -h "^shim:\|^hook backend" "$OUT"/*.log
