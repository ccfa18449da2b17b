#!/usr/bin/env python3
"""Labels the positions of our games against Fairy-Stockfish, for fitting the evaluation.

The evaluation is fitted to `labelled.csv` (Fairy-Stockfish self-play). Positions from our own
games against it are a different population: the committed evaluation's error on them is
nearly twice its error on `labelled.csv` (docs/JOURNAL.md, "Session 7"). This script makes
rows of the same kind from our games:

* Positions: every position from ply 8 on of the games in the PGN files whose White or Black
  is named `fsf` (match.py's `--name-b fsf`), not terminal and with both kings; duplicates
  (first four FEN fields) and positions already in `--exclude` are dropped; the rest are
  shuffled with `--seed` and the first `--count` kept.
* Labels, as in `labelled.csv`: a fresh search per position (`ucinewgame`, `position fen`
  without history, `go nodes --nodes`, one thread), its last exact score for the side to
  move (mate K as +-(32000 - plies)), the quiet flag and the game's result from White's view.
  FSF's best move goes to `<out>.policy` (`fen,bestmove`) for `tune_policy`.

    python3 scripts/label_game_positions.py /tmp/m/*.pgn --engine /tmp/fsf/fairy-stockfish \
        --exclude ../shared/atomic/labelled.csv --count 120000 --out games.csv

Needs python-chess 1.11.2 and ../shared/tools/fsf_uci.py. Deterministic for fixed inputs.
"""
import argparse
import multiprocessing as mp
import os
import random
import sys
import time

import chess
import chess.pgn
import chess.variant

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "shared", "tools"))
from fsf_uci import Engine, final_score, score_to_cp  # noqa: E402

RESULTS = {"1-0": "1", "0-1": "0", "1/2-1/2": "0.5"}
ENGINE = None
NODES = 0


def key(fen):
    return " ".join(fen.split()[:4])


def game_positions(paths, seen):
    rows = []
    for path in paths:
        with open(path) as f:
            while (game := chess.pgn.read_game(f)) is not None:
                if "fsf" not in (game.headers.get("White"), game.headers.get("Black")):
                    continue
                result = RESULTS.get(game.headers.get("Result"))
                if result is None:
                    continue
                board = game.board()
                for ply, move in enumerate(game.mainline_moves()):
                    if (ply >= 8 and not board.is_game_over()
                            and board.king(chess.WHITE) is not None
                            and board.king(chess.BLACK) is not None):
                        k = key(board.fen())
                        if k not in seen:
                            seen.add(k)
                            rows.append((board.fen(), result))
                    board.push(move)
    return rows


def is_quiet(board):
    if board.is_check():
        return 0
    return 0 if any(board.is_capture(m) for m in board.legal_moves) else 1


def init(engine, nodes):
    global ENGINE, NODES
    ENGINE = Engine(engine, {"UCI_Variant": "atomic", "Threads": 1, "Hash": 16})
    NODES = nodes


def fresh_search(fen):
    """FSF's score (side to move, cp) and best move from a fresh search of the bare FEN, or
    None when it reported no score. Runs in a worker set up by `init`."""
    ENGINE.newgame()
    best, infos = ENGINE.search("position fen " + fen, f"nodes {NODES}")
    info = final_score(infos)
    if info is None:
        return None
    return score_to_cp(info.kind, info.value), best


def label(row):
    fen, result = row
    searched = fresh_search(fen)
    if searched is None:
        return None
    cp, best = searched
    quiet = is_quiet(chess.variant.AtomicBoard(fen))
    return f"{fen},{cp},{quiet},{result}", (f"{fen},{best}" if best else None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pgn", nargs="+")
    ap.add_argument("--engine", required=True)
    ap.add_argument("--exclude", help="CSV whose first column's positions are left out")
    ap.add_argument("--count", type=int, default=120000)
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    seen = set()
    if args.exclude:
        with open(args.exclude) as f:
            next(f)
            seen.update(key(line.split(",", 1)[0]) for line in f)
    rows = game_positions(sorted(args.pgn), seen)
    print(f"{len(rows)} candidate positions", file=sys.stderr, flush=True)
    random.Random(args.seed).shuffle(rows)
    rows = rows[:args.count]
    start = time.time()
    with mp.Pool(args.workers, initializer=init, initargs=(args.engine, args.nodes)) as pool, \
            open(args.out, "w") as out, open(args.out + ".policy", "w") as policy:
        out.write("fen,score_stm_cp,quiet,result_white\n")
        policy.write("fen,bestmove\n")
        for i, labelled in enumerate(pool.imap(label, rows, chunksize=64), 1):
            if labelled is None:
                continue
            out.write(labelled[0] + "\n")
            if labelled[1]:
                policy.write(labelled[1] + "\n")
            if i % 5000 == 0:
                print(f"{i} rows, {time.time() - start:.0f} s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
