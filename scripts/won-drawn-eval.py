#!/usr/bin/env python3
"""How each network scores the positions of our won games against those of our drawn ones.

Why: against Fairy-Stockfish at 4x the nodes our score falls by draws, mostly games in which
our search had +2 to +10 for dozens of moves before a repetition or the fifty-move rule
(JOURNAL.md, sessions 36-38). A network that judges those endings better scores the positions
of drawn games lower than those of won games; one that misjudges them scores them alike or
higher. This puts a number on that before a network spends an hour of games at 4x.

    python3 scripts/won-drawn-eval.py --pgn A.pgn [--pgn B.pgn] --bin atomic-bot \\
        [--net default] [--net other.nnue] [--nodes 5000] [--per-class 250] [--engine ours]

Positions: every position of ENGINE's games (match.py's PGN, `{ +1.23 d20 ... }` comments) where
ENGINE was to move and its own score was +1.5 to +15, grouped by the game's result for ENGINE
(win, draw, loss) and sampled to at most --per-class each (seed 1). Each network searches each
position (`go nodes N` after `ucinewgame`); printed per network: the mean score of each group
(mates as +-3000) and the win - draw gap. The drawn positions come from few long games, so
the gap is a diagnostic, not a measurement: games decide. Needs python-chess (chess==1.11.2).
"""
import argparse
import random
import re
import subprocess
from collections import defaultdict

import chess
import chess.pgn

SCORE = re.compile(r"\s*([+-]?\d+\.\d+)")
CLAMP = 3000


def positions(paths, engine, per_class):
    """Result for `engine` (1, 0, -1) -> FENs where it was to move at +1.5 to +15."""
    found = defaultdict(list)
    for path in paths:
        with open(path) as fh:
            while (game := chess.pgn.read_game(fh)) is not None:
                ours_white = game.headers.get("White") == engine
                sign = 1 if ours_white else -1
                result = {"1-0": 1, "0-1": -1}.get(game.headers.get("Result"), 0) * sign
                board = game.board()
                for node in game.mainline():
                    score = SCORE.match(node.comment)
                    if (board.turn == chess.WHITE) == ours_white and score:
                        if 1.5 <= float(score.group(1)) <= 15:
                            found[result].append(board.fen())
                    board.push(node.move)
    rng = random.Random(1)
    return {k: (rng.sample(v, per_class) if len(v) > per_class else v) for k, v in found.items()}


def mean_scores(binary, net, groups, nodes):
    """Result -> the mean score of `net`'s search over that group's positions."""
    engine = subprocess.Popen(
        [binary, "uci"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
    )

    def send(line):
        engine.stdin.write(line + "\n")

    send("uci")
    send("setoption name UCI_Variant value atomic")
    if net != "default":
        send(f"setoption name EvalFile value {net}")
    send("isready")
    while engine.stdout.readline().strip() != "readyok":
        pass
    means = {}
    for result, fens in sorted(groups.items()):
        scores = []
        for fen in fens:
            send("ucinewgame")
            send(f"position fen {fen}")
            send(f"go nodes {nodes}")
            last = None
            while not (line := engine.stdout.readline()).startswith("bestmove"):
                if not line:
                    raise SystemExit(f"{binary} ended during the search of {fen}")
                if m := re.search(r"score cp (-?\d+)", line):
                    last = max(-CLAMP, min(CLAMP, int(m.group(1))))
                elif m := re.search(r"score mate (-?\d+)", line):
                    last = CLAMP if int(m.group(1)) > 0 else -CLAMP
            if last is not None:
                scores.append(last)
        means[result] = sum(scores) / len(scores) if scores else float("nan")
    send("quit")
    engine.wait()
    return means


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pgn", action="append", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--net", action="append", default=None)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--per-class", type=int, default=250)
    ap.add_argument("--engine", default="ours")
    args = ap.parse_args()
    groups = positions(args.pgn, args.engine, args.per_class)
    names = {1: "won", 0: "drawn", -1: "lost"}
    print("positions:", ", ".join(f"{names[k]} {len(v)}" for k, v in sorted(groups.items())))
    for net in args.net or ["default"]:
        means = mean_scores(args.bin, net, groups, args.nodes)
        cells = "  ".join(f"{names[k]} {v:7.1f}" for k, v in sorted(means.items()))
        gap = means.get(1, float("nan")) - means.get(0, float("nan"))
        print(f"{net}: {cells}  won - drawn {gap:+.1f}")


if __name__ == "__main__":
    main()
