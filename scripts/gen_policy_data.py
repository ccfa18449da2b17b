#!/usr/bin/env python3
"""Labels positions with Fairy-Stockfish's best move, for fitting the search's move priors.

Reads `fen` from the first column of a CSV (for example ../shared/atomic/labelled.csv), asks
Fairy-Stockfish (`UCI_Variant=atomic`, one thread, a fresh `position fen` per row) for its
best move at a fixed node count, and writes `fen,bestmove` rows. Deterministic for a fixed
node count and Hash. Shard with --shard K --shards N to run several processes at once.

    python3 scripts/gen_policy_data.py ../shared/atomic/labelled.csv /tmp/fsf/fairy-stockfish \
        --nodes 20000 --shard 0 --shards 2 --out policy-0.csv
"""
import argparse
import csv
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("positions")
    ap.add_argument("engine")
    ap.add_argument("--nodes", type=int, default=20000)
    ap.add_argument("--shard", type=int, default=0)
    ap.add_argument("--shards", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0, help="rows to read (0 = all)")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    eng = subprocess.Popen([args.engine], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, bufsize=1)

    def send(line):
        eng.stdin.write(line + "\n")

    def wait_for(prefix):
        while True:
            line = eng.stdout.readline()
            if not line:
                sys.exit(f"engine exited while waiting for {prefix!r}")
            if line.startswith(prefix):
                return line.strip()

    send("uci")
    wait_for("uciok")
    for name, value in (("UCI_Variant", "atomic"), ("Threads", "1"), ("Hash", "16")):
        send(f"setoption name {name} value {value}")
    send("isready")
    wait_for("readyok")

    with open(args.positions, newline="") as f, open(args.out, "w") as out:
        reader = csv.reader(f)
        next(reader)
        for i, row in enumerate(reader):
            if args.limit and i >= args.limit:
                break
            if i % args.shards != args.shard:
                continue
            fen = row[0]
            send("ucinewgame")
            send(f"position fen {fen}")
            send(f"go nodes {args.nodes}")
            best = wait_for("bestmove").split()
            if len(best) < 2 or best[1] == "(none)":
                continue
            out.write(f"{fen},{best[1]}\n")
            out.flush()
    send("quit")


if __name__ == "__main__":
    main()
