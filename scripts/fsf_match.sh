#!/usr/bin/env bash
# Our engine against Fairy-Stockfish (one thread, Hash 64 each), the shared openings, colours
# swapped, two games at a time (THREADS=N: N threads each; then CONCURRENCY=1 on N cores). The
# settings the engine is tuned and measured at:
#   bash scripts/fsf_match.sh nodes NAME GAMES [Option=value ...]   # ours 600 000 nodes, FSF 300 000
#   SCALE=4 bash scripts/fsf_match.sh nodes NAME GAMES ...          # ours 2 400 000, FSF 1 200 000
#   bash scripts/fsf_match.sh time  NAME GAMES [Option=value ...]   # both 10+0.1 (equal time)
# Node-limited games are deterministic and load-independent; timed ones need an idle machine.
# Environment: BIN (target/release/atomic-bot), FSF (/tmp/fsf/fairy-stockfish: a Fairy-Stockfish
# binary, see docs/ENGINE.md "How to measure"), PY (/tmp/venv-match/bin/python with
# chess==1.11.2), MATCH (../shared/tools/match.py: the workplace's match runner, beside the
# checkout), OPENINGS (data/atomic-openings.txt), OUT (/tmp/m): NAME.log and NAME.pgn, SCALE (1: the
# node budgets' multiplier; 4 is about the nodes of a 3+2 move, where the search must scale).
set -euo pipefail
mode=$1 name=$2 games=$3
shift 3
BIN=${BIN:-target/release/atomic-bot}
FSF=${FSF:-/tmp/fsf/fairy-stockfish}
PY=${PY:-/tmp/venv-match/bin/python}
MATCH=${MATCH:-../shared/tools/match.py}
OPENINGS=${OPENINGS:-data/atomic-openings.txt}
OUT=${OUT:-/tmp/m}
mkdir -p "$OUT"
case $mode in
  nodes)
    scale=${SCALE:-1}
    [[ $scale =~ ^[1-9][0-9]*$ ]] || { echo "SCALE must be a positive integer, not '$scale'" >&2; exit 2; }
    limits=(--limit-a nodes=$((600000 * scale)) --limit-b nodes=$((300000 * scale)))
    ;;
  time) limits=(--tc 10+0.1) ;;
  *) echo "mode must be nodes or time" >&2; exit 2 ;;
esac
options=()
for o in "$@"; do options+=(--option-a "$o"); done
"$PY" "$MATCH" --engine-a "$BIN uci" --name-a ours \
  --engine-b "$FSF" --name-b fsf --option-a Hash=64 --option-a "Threads=${THREADS:-1}" \
  "${options[@]}" --option-b "Threads=${THREADS:-1}" --option-b Hash=64 "${limits[@]}" \
  --games "$games" --concurrency "${CONCURRENCY:-2}" --openings "$OPENINGS" --pgn "$OUT/$name.pgn" \
  | tee "$OUT/$name.log"
