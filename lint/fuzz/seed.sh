#!/bin/sh
# Fills corpus/<target>/ (git-ignored) with seed inputs from this repository's own files:
# the fixtures' and the lint's Rust sources, the fixtures' module files joined in pairs
# (a.rs NUL b.rs) and the committed config seeds. Run from lint/fuzz.
set -eu
repo=$(cd ../.. && pwd)
mkdir -p corpus/pipeline corpus/pipeline_twice corpus/pipeline_files corpus/config corpus/baseline
n=0
for f in $(find "$repo/fixtures" "$repo/lint/src" "$repo/lint/core/src" "$repo/lint/workspace/src" "$repo/runtime/src" -name '*.rs' | sort); do
    n=$((n + 1))
    cp "$f" "corpus/pipeline/seed-$n.rs"
    cp "$f" "corpus/pipeline_twice/seed-$n.rs"
done
n=0
for dir in $(find "$repo/fixtures" -name src -type d | sort); do
    prev=""
    for f in $(find "$dir" -name '*.rs' | sort); do
        if [ -n "$prev" ]; then
            n=$((n + 1))
            { cat "$prev"; printf '\0'; cat "$f"; } > "corpus/pipeline_files/seed-$n.rs"
        fi
        prev=$f
    done
done
cp seeds/config/*.toml corpus/config/
cp seeds/baseline/*.toml corpus/baseline/
n=0
for f in $(find "$repo/fixtures" -name '*.toml' -not -path '*/target/*' | sort); do
    n=$((n + 1))
    cp "$f" "corpus/config/fixture-$n.toml"
done
echo "seeded: $(ls corpus/pipeline | wc -l) pipeline, $(ls corpus/pipeline_files | wc -l) pipeline_files, $(ls corpus/config | wc -l) config"
