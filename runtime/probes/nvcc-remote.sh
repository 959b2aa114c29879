#!/usr/bin/env bash
# Compiles a build script's CUDA kernels on another machine: stands in for nvcc (cudaforge and
# bindgen_cuda take it from the NVCC variable) where nvcc is too slow, runs the very same nvcc
# commands where there are cores and a toolkit (the GPU machine), and hands their outputs back to
# the build. Three steps:
#
#   NVCC=nvcc-remote.sh NVCC_REMOTE=record NVCC_REMOTE_DIR=DIR cargo build ...   (here)
#       Each compile (`-c` or `--ptx`) is recorded in DIR/jobs/KEY (cwd, arguments) and its inputs
#       copied under DIR/files; empty placeholders stand in for the outputs so the build script
#       ends (the build's results are not usable: build again in another target directory).
#   nvcc-remote.sh run DIR OUT_TAR                                             (GPU machine)
#       Runs every recorded job with the nvcc on PATH, all cores, and packs the outputs, logs and
#       exit statuses into OUT_TAR (a .tar.xz).
#   NVCC=nvcc-remote.sh NVCC_REMOTE=replay NVCC_REMOTE_DIR=DIR cargo build ... (here, after
#       unpacking OUT_TAR into DIR) Each compile whose KEY has an output is answered with it; one
#       that was not recorded fails and says so.
#
# KEY is the SHA-256 of the working directory, the arguments (output paths reduced to their file
# names) and the path and content of every file the compile reads outside the toolkit (as
# `nvcc -M` lists them): the same command on the same sources. Everything else (`--version`,
# `--list-gpu-code`, `--lib`) goes to the real nvcc (NVCC_REMOTE_REAL, default `nvcc` on PATH);
# in record mode `--lib` writes an empty placeholder, its inputs being placeholders.
set -euo pipefail

die() { echo "nvcc-remote: $*" >&2; exit 1; }

# Splits "$@" into globals: INPUT (the .cu file), OUT_FILE (-o), OUT_DIR (--output-directory),
# NORM (the arguments with output paths reduced to file names), DEP_ARGS (for `nvcc -M`).
parse() {
  INPUT="" OUT_FILE="" OUT_DIR="" NORM=() DEP_ARGS=()
  while [ $# -gt 0 ]; do
    case "$1" in
      -o) OUT_FILE=$2; NORM+=(-o "@OUT@/$(basename "$2")"); shift 2; continue ;;
      --output-directory) OUT_DIR=$2; NORM+=(--output-directory "@OUT@"); shift 2; continue ;;
      -c | --ptx) NORM+=("$1") ;;
      --threads=*) NORM+=("$1") ;;
      *.cu) INPUT=$1; NORM+=("$1"); DEP_ARGS+=("$1") ;;
      *) NORM+=("$1"); DEP_ARGS+=("$1") ;;
    esac
    shift
  done
  [ -n "$INPUT" ] || die "no .cu input in: $*"
  for a in "${NORM[@]}"; do
    case "$a" in /* | -I/*) die "absolute path in the arguments (not relocatable): $a" ;; esac
  done
}

# The files the compile reads outside the toolkit, absolute, one per line, sorted.
deps() {
  local toolkit
  toolkit=$(cd "$(dirname "$(command -v "$REAL")")/.." && pwd -P)
  "$REAL" "${DEP_ARGS[@]}" -M 2>/dev/null | sed -e 's/\\$//' -e 's/^[^:]*://' | tr ' ' '\n' \
    | sed '/^$/d' | while read -r f; do
        f=$(cd "$(dirname "$f")" && echo "$(pwd -P)/$(basename "$f")")
        case "$f" in "$toolkit"/* | /usr/include/* | /usr/lib/*) ;; *) echo "$f" ;; esac
      done | sort -u
}

key() {
  { pwd -P; printf '%s\0' "${NORM[@]}"; echo; deps | while read -r f; do
      echo "$f $(sha256sum <"$f" | cut -d' ' -f1)"; done; } | sha256sum | cut -d' ' -f1
}

# The output files a compile writes, relative to @OUT@.
outputs() {
  if [ -n "$OUT_FILE" ]; then basename "$OUT_FILE"
  else basename "${INPUT%.cu}.ptx"; fi
}

destination() {
  if [ -n "$OUT_FILE" ]; then echo "$OUT_FILE"
  else echo "${OUT_DIR:-.}/$(basename "${INPUT%.cu}.ptx")"; fi
}

record() {
  local k job
  k=$(key)
  job="$DIR/jobs/$k"
  mkdir -p "$job"
  pwd -P >"$job/cwd"
  printf '%s\0' "${NORM[@]}" >"$job/args"
  deps | while read -r f; do mkdir -p "$DIR/files$(dirname "$f")"; cp "$f" "$DIR/files$f"; done
  mkdir -p "$(dirname "$(destination)")"
  : >"$(destination)"
  echo "nvcc-remote: recorded $k ($INPUT)" >&2
}

replay() {
  local k out
  k=$(key)
  out="$DIR/out/$k"
  [ -f "$out/status" ] || die "no prebuilt output for $INPUT (key $k; looked in $out): record it and run it on the GPU machine"
  cat "$out/log" >&2
  [ "$(cat "$out/status")" = 0 ] || die "nvcc failed on the GPU machine for $INPUT (exit $(cat "$out/status"), log above)"
  cp "$out/$(outputs)" "$(destination)"
}

# On the GPU machine: one job, its outputs in DIR/out/KEY.
run_one() {
  local dir=$1 k=$2 out args=() a status=0
  out="$dir/out/$k"
  mkdir -p "$out"
  while IFS= read -r -d '' a; do args+=("${a//@OUT@/$out}"); done <"$dir/jobs/$k/args"
  (cd "$dir/files$(cat "$dir/jobs/$k/cwd")" && nvcc "${args[@]}") >"$out/log" 2>&1 || status=$?
  echo "$status" >"$out/status"
  echo "nvcc-remote: $k exit $status" >&2
}

# The size of a job's .cu source (its last argument).
job_size() {
  local a last
  while IFS= read -r -d '' a; do last=$a; done <"$1/jobs/$2/args"
  wc -c <"$1/files$(cat "$1/jobs/$2/cwd")/$last"
}

run_all() {
  local dir=$1 tar=$2 self
  dir=$(cd "$dir" && pwd)
  self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
  command -v nvcc >/dev/null || die "no nvcc on PATH"
  nvcc --version | tail -2 >&2
  # Object files (whole SASS builds) first, then PTX, largest source first; jobs whose output
  # is already there (an earlier run, unpacked into DIR) are skipped.
  local k objects=() ptx=() failed=0
  for k in $(ls "$dir/jobs"); do
    [ "$(cat "$dir/out/$k/status" 2>/dev/null)" = 0 ] && continue
    if tr '\0' '\n' <"$dir/jobs/$k/args" | grep -q '^@OUT@/.*\.o$'; then objects+=("$k")
    else ptx+=("$(job_size "$dir" "$k") $k"); fi
  done
  mapfile -t ptx < <(printf '%s\n' "${ptx[@]}" | sort -rn | cut -d' ' -f2)
  # NVCC_REMOTE_TIMEOUT (seconds) bounds the whole run: what finished is packed all the same.
  printf '%s\n' "${objects[@]}" "${ptx[@]}" | sed '/^$/d' \
    | timeout "${NVCC_REMOTE_TIMEOUT:-0}" xargs -P "$(nproc)" -I{} bash "$self" run-one "$dir" {} || true
  tar -C "$dir" -cJf "$tar" out
  for k in $(ls "$dir/jobs"); do
    [ "$(cat "$dir/out/$k/status" 2>/dev/null)" = 0 ] || { echo "failed or not run: $k" >&2; failed=1; }
  done
  [ "$failed" = 0 ] || die "some jobs failed (listed above; their logs are in $tar)"
  echo "nvcc-remote: $(ls "$dir/jobs" | wc -l) jobs done, outputs in $tar" >&2
}

case "${1:-}" in
  run) run_all "$2" "$3"; exit ;;
  run-one) run_one "$2" "$3"; exit ;;
esac

REAL=${NVCC_REMOTE_REAL:-nvcc}
DIR=${NVCC_REMOTE_DIR:?set NVCC_REMOTE_DIR}
DIR=$(mkdir -p "$DIR" && cd "$DIR" && pwd)
case " $* " in
  *" -c "* | *" --ptx "*) ;;
  *" --lib "*)
    if [ "${NVCC_REMOTE:-}" = record ]; then
      while [ $# -gt 0 ]; do [ "$1" = -o ] && : >"$2"; shift; done; exit 0
    fi
    exec "$REAL" "$@" ;;
  *) exec "$REAL" "$@" ;;
esac
parse "$@"
case "${NVCC_REMOTE:-}" in
  record) record ;;
  replay) replay ;;
  *) die "NVCC_REMOTE must be record or replay (got '${NVCC_REMOTE:-}')" ;;
esac
