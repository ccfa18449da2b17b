#!/usr/bin/env python3
"""Where each engine's clock went in a match.py PGN: seconds a move by ten-move stretches and
the lowest clock each game reached (for the engine named "ours").

Usage: python3 scripts/clock_use.py GAMES.pgn   (needs python-chess; match.py writes each move's
time as a `{ ... 0.40s }` comment; the clock is rebuilt from the TimeControl header).
"""
import re
import statistics
import sys

import chess.pgn


def main(path: str) -> None:
    games = []
    with open(path) as f:
        while (game := chess.pgn.read_game(f)) is not None:
            base, inc = (float(x) for x in game.headers.get("TimeControl", "10+0.1").split("+"))
            white = game.headers["White"]
            black = game.headers["Black"]
            used = {white: [], black: []}
            node = game
            while node.variations:
                mover = white if node.board().turn == chess.WHITE else black
                node = node.variations[0]
                m = re.search(r"([\d.]+)s", node.comment or "")
                if m:
                    used[mover].append(float(m.group(1)))
            games.append((base, inc, used))
    names = sorted({n for _, _, u in games for n in u})
    for name in names:
        moves = [t for _, _, u in games for t in u.get(name, [])]
        print(f"{name}: {len(moves)} timed moves, {statistics.mean(moves):.3f} s a move")
    print("moves  games  " + "  ".join(f"{n:>8}" for n in names))
    for k in range(0, 120, 10):
        cols, count = [], 0
        for name in names:
            stretch = [t for _, _, u in games for t in u.get(name, [])[k : k + 10]]
            count = max(count, sum(1 for _, _, u in games if len(u.get(name, [])) > k))
            cols.append(f"{statistics.mean(stretch):8.3f}" if stretch else f"{'':8}")
        if count:
            print(f"{k + 1:>3}-{k + 10:<3} {count:>5}  " + "  ".join(cols))
    lows = []
    for base, inc, u in games:
        clock = low = base
        for t in u.get("ours", []):
            clock += inc - t
            low = min(low, clock)
        lows.append(low)
    lows.sort()
    print(f"ours, lowest clock in a game: median {statistics.median(lows):.2f} s, "
          f"lowest {', '.join(f'{x:.2f}' for x in lows[:5])}")


if __name__ == "__main__":
    main(sys.argv[1])
