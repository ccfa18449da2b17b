#!/usr/bin/env python3
"""Positions one random move away from our games, labelled by Fairy-Stockfish.

A search tree is mostly positions after moves nobody would play; our games' positions lie on
one narrow path. This makes rows of the first kind: take the positions of a labelled CSV (for
example `data/eval-games-fsf20k.csv.gz` unpacked) in a seeded random order, play one random
legal move after which the opponent cannot win at once (explode our king or mate), drop
duplicates (first four FEN fields), and label each new position as `labelled.csv` is (a fresh
search per bare FEN, `go nodes --nodes`, one thread). The game's result says nothing about a
position after a random move, so `result_white` is FSF's own win probability,
`sigmoid(score / 400)` from White's view: with `tune_eval`'s default blend the target is then
FSF's score alone.

    python3 scripts/perturb_positions.py games.csv --engine /tmp/fsf/fairy-stockfish \
        --count 40000 --out perturbed.csv

Needs python-chess 1.11.2, ../shared/tools/fsf_uci.py and label_game_positions.py beside it. Deterministic for fixed inputs.
"""
import argparse
import math
import multiprocessing as mp
import os
import random
import sys

import chess
import chess.variant

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from label_game_positions import fresh_search, init, is_quiet  # noqa: E402


def opponent_wins_at_once(board):
    for move in board.legal_moves:
        after = board.copy(stack=False)
        after.push(move)
        if after.is_variant_loss() or after.is_checkmate():
            return True
    return False


def perturbed(rows, count, rng):
    seen, out = set(), []
    for fen in rows:
        board = chess.variant.AtomicBoard(fen)
        moves = list(board.legal_moves)
        rng.shuffle(moves)
        for move in moves:
            after = board.copy(stack=False)
            after.push(move)
            if (after.is_game_over() or after.king(chess.WHITE) is None
                    or after.king(chess.BLACK) is None or opponent_wins_at_once(after)):
                continue
            key = " ".join(after.fen().split()[:4])
            if key not in seen:
                seen.add(key)
                out.append(after.fen())
            break
        if len(out) >= count:
            break
    return out


def label(fen):
    searched = fresh_search(fen)
    if searched is None:
        return None
    cp = searched[0]
    board = chess.variant.AtomicBoard(fen)
    white = 1.0 / (1.0 + math.exp(-max(-2000, min(2000, cp)) / 400.0))
    if board.turn == chess.BLACK:
        white = 1.0 - white
    return f"{fen},{cp},{is_quiet(board)},{white:.4f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("positions", help="CSV with a header and a FEN in the first column")
    ap.add_argument("--engine", required=True)
    ap.add_argument("--count", type=int, default=40000)
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    with open(args.positions) as f:
        next(f)
        rows = [line.split(",", 1)[0] for line in f]
    rng = random.Random(args.seed)
    rng.shuffle(rows)
    fens = perturbed(rows, args.count, rng)
    print(f"{len(fens)} positions", file=sys.stderr, flush=True)
    with mp.Pool(args.workers, initializer=init, initargs=(args.engine, args.nodes)) as pool, \
            open(args.out, "w") as out:
        out.write("fen,score_stm_cp,quiet,result_white\n")
        for row in pool.imap(label, fens, chunksize=64):
            if row:
                out.write(row + "\n")


if __name__ == "__main__":
    main()
