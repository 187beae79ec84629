#!/usr/bin/env bash
# The abi3 wheel works without Rust: build it (reusing native/target, so a warm run only
# links), install it into a fresh venv with every Rust toolchain removed from PATH, and run
# the CLI from it outside the source tree. Called by scripts/test.sh; on its own:
#   bash scripts/wheel_check.sh        (needs .venv from scripts/bootstrap.sh)
# SV_WHEEL_DIR keeps the venv and the wheel there instead of a temporary directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

work=${SV_WHEEL_DIR:-$(mktemp -d)}
[ -n "${SV_WHEEL_DIR:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/wheels"
rm -f "$work"/wheels/*.whl

echo "==> wheel: building the abi3 wheel (maturin, the build backend)" >&2
# pip wheel runs the same PEP 517 build as an install; the crate compiles into native/target.
.venv/bin/python -m pip wheel --quiet --no-deps --wheel-dir "$work/wheels" .
wheels=("$work"/wheels/stream_validator-*-abi3-*.whl)
[ -f "${wheels[0]}" ] || { echo "error: no abi3 wheel built: $(ls "$work/wheels")" >&2; exit 1; }

# PATH without any directory holding cargo or rustc (rustup's ~/.cargo/bin, /usr/local/cargo/bin, ...).
bare=
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  [ -x "$dir/cargo" ] || [ -x "$dir/rustc" ] || bare=${bare:+$bare:}$dir
done
no_rust() { env -u CARGO_HOME -u RUSTUP_HOME -u CARGO_TARGET_DIR PATH="$bare" "$@"; }
if no_rust bash -c 'command -v cargo || command -v rustc' >/dev/null; then
  echo "error: cargo or rustc still found on the stripped PATH: $bare" >&2
  exit 1
fi

echo "==> wheel: installing $(basename "${wheels[0]}") into a fresh venv without Rust" >&2
rm -rf "$work/venv"
no_rust "${PYTHON:-python3}" -m venv "$work/venv"
# --only-binary: nothing may be compiled here (there is no toolchain to do it).
no_rust "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --only-binary=:all: "${wheels[0]}"

sample="$work/sample.jsonl"
cat >"$sample" <<'EOF'
{"symbol":"AAPL","exchange":"XNAS","event_ts":"2026-11-30T14:30:00.000001Z","seq":1,"price":190.5,"size":100,"bid":190.4,"ask":190.6,"bid_sz":3,"ask_sz":5}
{"symbol":"AAPL","exchange":"XNAS","event_ts":"2026-11-30T14:30:00.000002Z","seq":2,"price":-1.0,"size":100,"bid":190.4,"ask":190.6,"bid_sz":3,"ask_sz":5}
EOF
cd "$work"  # away from the source tree: only the installed package can be imported
no_rust venv/bin/python -c 'import stream_validator._native as n; print("==> wheel: _native", n.build_version(), "from", n.__file__)' >&2
case "$(no_rust venv/bin/python -c 'import stream_validator; print(stream_validator.__file__)')" in
  "$work"/venv/*) ;;
  *) echo "error: stream_validator was not imported from the wheel's venv" >&2; exit 1 ;;
esac
no_rust venv/bin/stream-validator --version >&2
status=0
no_rust venv/bin/stream-validator validate --contract "$root/config/contracts/tick.yaml" \
  --valid-out valid.jsonl --dlq-out dlq.jsonl --json "$sample" >summary.json || status=$?
# One bad record out of two: validate exits non-zero for a batch with quarantined records.
if [ "$(wc -l <valid.jsonl)" -ne 1 ] || [ "$(wc -l <dlq.jsonl)" -ne 1 ]; then
  echo "error: validate from the wheel (exit $status) did not split the sample 1/1:" >&2
  cat summary.json >&2
  exit 1
fi
echo "==> wheel: validate from the wheel split the sample 1 valid / 1 DLQ (exit $status)" >&2
