#!/usr/bin/env python3
"""Nodes and time a UCI engine needs to reach a fixed depth on the first N shared openings.

Why: a search change that only reorders or prunes shows up here as fewer nodes to the same
depth, long before a match can tell; extensions show up as more. The count is deterministic
for our engine (a fresh table per position), so two runs of one binary agree to the node.

    python3 scripts/depth_nodes.py target/release/atomic-bot 13 [Option=value ...]
Environment: OPENINGS (default data/atomic-openings.txt), POSITIONS (default 20).
"""
import os
import subprocess
import sys


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, depth, options = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    path = os.environ.get("OPENINGS", "data/atomic-openings.txt")
    count = int(os.environ.get("POSITIONS", "20"))
    with open(path) as f:
        lines = [l.split("#")[0].strip() for l in f if l.strip() and not l.startswith("#")]
    engine = subprocess.Popen([binary, "uci"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, bufsize=1)

    def send(cmd: str) -> None:
        engine.stdin.write(cmd + "\n")
        engine.stdin.flush()

    send("uci")
    send("setoption name Hash value 64")
    for option in options:
        name, value = option.split("=", 1)
        send(f"setoption name {name} value {value}")
    nodes = millis = 0
    for moves in lines[:count]:
        send("ucinewgame")
        send(f"position startpos moves {moves}")
        send(f"go depth {depth}")
        last = None
        while True:
            line = engine.stdout.readline()
            if not line:
                sys.exit("engine exited")
            if line.startswith("info depth"):
                last = line.split()
            if line.startswith("bestmove"):
                break
        nodes += int(last[last.index("nodes") + 1])
        millis += int(last[last.index("time") + 1])
    send("quit")
    print(f"nodes {nodes} time {millis} ms")


if __name__ == "__main__":
    main()
