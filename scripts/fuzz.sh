#!/usr/bin/env bash
# Coverage-guided fuzzing of the native verdict scanner (native/fuzz, libFuzzer through
# libfuzzer-sys): arbitrary bytes must get a verdict, never a panic (overflow checks on)
# or a hang (-timeout). A crash input is written to native/fuzz/target/ and the run fails.
#
#   scripts/fuzz.sh            # 60 s
#   scripts/fuzz.sh 30         # the short bounded run CI makes
#   scripts/fuzz.sh 14400      # a long run (4 h); the corpus grows in native/fuzz/target/corpus
#   scripts/fuzz.sh 30 --quiet # as scripts/test.sh calls it: libFuzzer's output goes to
#                              # native/fuzz/target/fuzz.log (its tail shown on a failure);
#
# Needs a Rust toolchain (stable will do) and a C++ compiler.
set -euo pipefail
seconds=${1:-60}
quiet=${2:-}
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/../native/fuzz"
# libFuzzer comes from the libfuzzer-sys crate; the coverage instrumentation below uses stable
# codegen options, so the stable toolchain does; a nightly one is used when present.
toolchain=()
if cargo +nightly --version >/dev/null 2>&1; then toolchain=(+nightly); fi
if [ "$quiet" = --quiet ]; then
  mkdir -p target
  "$self" "$seconds" >target/fuzz.log 2>&1 || { tail -40 target/fuzz.log >&2; exit 1; }
  exit 0
fi
triple=$(rustc "${toolchain[@]}" -vV | sed -n 's/^host: //p')
# The flags cargo-fuzz sets (coverage counters and comparison tracing for libFuzzer).
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks"
cargo "${toolchain[@]}" build --quiet --release --bin scan --target "$triple" --target-dir target
mkdir -p target/corpus target/artifacts
exec "target/$triple/release/scan" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
  -artifact_prefix=target/artifacts/ -print_final_stats=1 target/corpus corpus/scan
