#!/usr/bin/env bash
# Builds the programs of runtime/probes that run nosync's hook on real libraries (candle-core 0.11
# with `cuda`, burn-cuda 0.21) on a machine without a GPU or a CUDA toolkit, for a run on a GPU
# machine with CUDA 13.0 (driver >= 580). Usage:
#
#   runtime/probes/build-gpu-apps.sh OUT_DIR [TOOLS_DIR]
#   NVCC_REMOTE_DIR=DIR runtime/probes/build-gpu-apps.sh record [TOOLS_DIR]
#   NVCC_REMOTE_DIR=DIR runtime/probes/build-gpu-apps.sh OUT_DIR [TOOLS_DIR]
#
# candle-kernels compiles its kernels with nvcc at build time: PTX, and a static library of
# SASS for the GPU's architecture (-O3; over 90 minutes on 2 busy cores). With NVCC_REMOTE_DIR
# the compiles go through nvcc-remote.sh: `record` writes each nvcc command and its sources
# into DIR (placeholders stand in for the outputs; nothing is built), `nvcc-remote.sh run DIR
# OUT.tar.xz` runs them on a machine with cores and a toolkit (the GPU machine), and once its
# `out/` is unpacked into DIR, the build takes each compile's output from there (the same
# command on the same sources, or it fails and says so).
#
# TOOLS_DIR (default ~/.cache/nosync-cuda13) receives, from PyPI:
# - nvcc 13.0 with NVVM, its headers and the runtime (candle-kernels compiles its kernels to PTX at
#   build time): all five packages in one `pip install --target` (a second one replaces the folder);
# - the libraries candle's cudarc links (`dynamic-linking`): cuBLAS, cuRAND, NVRTC 13.0, in a
#   second folder, linked to by unversioned names in the toolkit's `lib`;
# - a stub `libcuda.so` whose soname is `libcuda.so.1`: the driver library exists only where the
#   driver is installed; the stub defines every driver function cudarc declares, and the program
#   loads the real driver by that soname at run time.
# The GPU machine needs the driver and the CUDA 13.0 toolkit's cuBLAS, cuRAND and NVRTC on the
# loader's path (LD_LIBRARY_PATH=/usr/local/cuda-13.0/targets/x86_64-linux/lib).
set -euo pipefail
record=false
[ "$1" = record ] && { record=true; set -- "$1" "${2:-}"; }
$record || out=$(mkdir -p "$1" && cd "$1" && pwd)
tools=${2:-$HOME/.cache/nosync-cuda13}
here=$(cd "$(dirname "$0")" && pwd)
root="$tools/nvidia/cu13"
if [ ! -x "$root/bin/nvcc" ]; then
  pip install -q --no-deps --target "$tools" "nvidia-cuda-nvcc==13.0.*" "nvidia-nvvm==13.0.*" \
    "nvidia-cuda-crt==13.0.*" "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-cccl==13.0.*"
fi
if [ ! -e "$tools-libs/nvidia/cu13/lib/libcublas.so.13" ]; then
  pip install -q --no-deps --target "$tools-libs" "nvidia-cublas==13.0.*" \
    "nvidia-curand==10.4.0.*" "nvidia-cuda-nvrtc==13.0.*"
fi
for lib in "$tools-libs"/nvidia/cu13/lib/lib{cublas,cublasLt,nvrtc}.so.13 \
           "$tools-libs"/nvidia/cu13/lib/libcurand.so.10 "$root"/lib/libcudart.so.13; do
  name=$(basename "$lib"); ln -sf "$lib" "$root/lib/${name%%.so*}.so"
done
# The stub driver: every `cu*` function of cudarc 0.19's driver bindings, doing nothing.
bindings=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cudarc-0.19.*/src/driver/sys/mod.rs | tail -1)
grep -oE "pub unsafe fn cu[A-Za-z0-9_]+" "$bindings" | sed 's/pub unsafe fn //' | sort -u \
  | sed 's/.*/void &(void) {}/' > "$tools/cuda_stub.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$root/lib/libcuda.so" "$tools/cuda_stub.c"

export PATH="$root/bin:$PATH" CUDA_ROOT="$root" CUDA_PATH="$root" CUDA_COMPUTE_CAP=90
# candle's and cubecl's cudarc take the CUDA version from the toolkit: 13.0, as on the GPU machine.
export CUDARC_CUDA_VERSION=13000
target=${CARGO_TARGET_DIR:-$here/../../target}/gpu-apps
if [ -n "${NVCC_REMOTE_DIR:-}" ]; then
  # cudaforge takes the toolkit's include and lib from nvcc's path: a bin/nvcc beside links to them.
  remote="$tools/nvcc-remote"
  mkdir -p "$remote/bin"
  ln -sf "$here/nvcc-remote.sh" "$remote/bin/nvcc"
  ln -sfn "$root/include" "$remote/include"
  ln -sfn "$root/lib" "$remote/lib64"
  export NVCC="$remote/bin/nvcc" NVCC_REMOTE_REAL="$root/bin/nvcc"
  if $record; then
    (cd "$here/candle" && NVCC_REMOTE=record CARGO_TARGET_DIR="$target-record" \
      nice cargo build --release --locked -p candle-kernels)
    echo "recorded $(ls "$NVCC_REMOTE_DIR/jobs" | wc -l) nvcc jobs in $NVCC_REMOTE_DIR"
    exit 0
  fi
  export NVCC_REMOTE=replay
fi
$record && { echo "record needs NVCC_REMOTE_DIR" >&2; exit 2; }
for app in candle burn; do
  (cd "$here/$app" && CARGO_TARGET_DIR="$target-$app" nice cargo build --release --locked)
  cp "$target-$app/release/nosync-probe-$app" "$out/"
done
ls -la "$out"
