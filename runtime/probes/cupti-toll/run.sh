#!/bin/bash
# On a GPU machine with the CUDA 13.0 toolkit (nvcc, CUPTI): builds the toll probe and runs ROUNDS
# rotations of its 8 variants (variant 0 twice: the A/A control), one process each, pinned to one
# core; prints one line per process (medians of 15 blocks, ns). Usage: run.sh [ROUNDS]
cd "$(dirname "$0")"; out=${OUT:-/tmp/out}; mkdir -p "$out"
rounds=${1:-12}
inc=/usr/local/cuda-13.0/targets/x86_64-linux/include; lib=/usr/local/cuda-13.0/targets/x86_64-linux/lib
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$out/toll.log"
nvcc -O2 -std=c++17 -o toll toll.cu -I"$inc" -L"$lib" -lcupti -lcuda -Xlinker -rpath -Xlinker "$lib" 2>&1 | tail -5
order=(0 1 2 3 4 5 6 7 0)
echo "variant launch_ns cudarc_launch_ns query_ns idle_sync_ns" | tee -a "$out/toll.log"
for r in $(seq 1 "$rounds"); do
  n=${#order[@]}
  for i in $(seq 0 $((n - 1))); do
    v=${order[$(( (i + r) % n ))]}
    tag=$v; [ "$v" = 0 ] && [ $(( (i + r) % n )) = 8 ] && tag=A
    res=$(taskset -c 5 ./toll "$v" 15) || res="$v failed"
    echo "$r $tag ${res#* }" | tee -a "$out/toll.log"
  done
done
