#!/usr/bin/env bash
# Runs every test of atomic-bot: formatting and lints, the Rust test suites of the whole workspace, then the
# black-box checks of the release binary (rules vectors over UCI, container smoke tests).
# Usage: bash scripts/test-all.sh        (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== formatting and lints"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo test (workspace)"
cargo test --workspace --locked

# Guards that keep the house in order (issue 29): nothing GPL and no banned crate in what we
# ship (deny.toml), rustdoc without warnings (no broken or private links), and no dependency
# declared but unused. The two cargo tools are installed on first use (debug builds: they
# compile in a third of the time and run for a second).
echo "== guards: licences and bans, rustdoc, unused dependencies"
install_tool() { # binary crate@version
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "installing $2 (once)"
    cargo install --locked --debug --quiet "$2"
  fi
}
install_tool cargo-deny cargo-deny@0.20.2
install_tool cargo-machete cargo-machete@0.9.2
# cargo deny reads the metadata of every platform's crates (windows ones too), which a fresh
# machine's registry lacks after a Linux build: fetch them first (crates.io is reachable).
cargo fetch --locked --quiet
cargo deny --offline check licenses bans
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked --quiet
cargo machete

echo "== release build (the Dockerfile's command line)"
cargo build --locked --release --bin atomic-bot

# The workplace's black-box checker lives beside the repository (../shared/tools); the same
# vectors are also checked in-process by crates/atomic-chess/tests, so a plain clone loses nothing.
CHECK_RULES=${CHECK_RULES:-../shared/tools/check_rules.py}
if [[ -f "$CHECK_RULES" ]]; then
  echo "== rules vectors over UCI ($CHECK_RULES)"
  python3 "$CHECK_RULES" --engine "target/release/atomic-bot uci" \
    --vectors crates/atomic-chess/tests/data/positions.jsonl \
    --perft crates/atomic-chess/tests/data/perft.txt \
    --max-depth 4 --fen --strict-ep
else
  echo "== rules vectors over UCI: skipped ($CHECK_RULES not found)"
fi

if [[ -f .ci/docker-smoke.sh ]]; then
  echo "== container smoke tests"
  bash .ci/docker-smoke.sh
fi
echo "== all tests passed"
