#!/usr/bin/env python3
"""Two matches of one engine against the same opponent, compared game for game.

Why: node-limited matches replay exactly (both searches are deterministic on one thread), so
two settings of our engine played against Fairy-Stockfish on the same openings and colours
differ only where the setting changed a game. Comparing the two scores game by game (the
mean of the per-game differences and its standard error) removes the openings' own variance,
which dominates an unpaired comparison: 100 games give about ±4 points paired where each score
alone carries about ±4.5 and their difference ±6 (JOURNAL.md, sessions 36-37).

    python3 scripts/paired.py A.pgn B.pgn [ENGINE]

A game is identified by its opening's moves (match.py writes `[Opening "#N: moves"]`; N, the
line's number in the openings file played, is dropped so that a match on a part of the file,
`OPENINGS=<openings 26-75>`, pairs with one on the whole) and ENGINE's colour (default `ours`,
the name `scripts/fsf_match.sh` gives our engine). Prints each
file's score over the games both hold, the paired difference A - B in points (percent) with
one standard error, and how many games differ in result. Reads the PGN with
`colour_split.py`'s reader (beside it); needs only the standard library.
"""
import math
import sys

# The PGN header reader and result table of the colour split, beside this script.
from colour_split import SCORE, games


def scores(path: str, engine: str) -> dict[tuple[str, str], float]:
    """(opening, engine's colour) -> engine's score, for every finished game of the file."""
    out: dict[tuple[str, str], float] = {}
    for tags in games(path):
        result = tags.get("Result")
        if result not in SCORE:
            continue
        if tags.get("White") == engine:
            colour, score = "white", SCORE[result]
        elif tags.get("Black") == engine:
            colour, score = "black", 1.0 - SCORE[result]
        else:
            continue
        opening = tags.get("Opening", "?")
        number, sep, moves = opening.partition(": ")
        key = (moves if sep and number.startswith("#") else opening, colour)
        if key in out:
            sys.exit(f"paired: {path} has two games of opening {key[0]!r} with {engine} {colour}")
        out[key] = score
    return out


def main() -> None:
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    engine = sys.argv[3] if len(sys.argv) == 4 else "ours"
    a, b = scores(sys.argv[1], engine), scores(sys.argv[2], engine)
    keys = sorted(set(a) & set(b))
    if not keys:
        sys.exit(f"paired: no game of {engine!r} is in both files")
    diffs = [a[k] - b[k] for k in keys]
    n = len(keys)
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    se = math.sqrt(var / n)
    sa = 100.0 * sum(a[k] for k in keys) / n
    sb = 100.0 * sum(b[k] for k in keys) / n
    changed = sum(1 for d in diffs if d != 0)
    print(f"games in both: {n} (only in A: {len(a) - n}, only in B: {len(b) - n})")
    print(f"A {sa:.1f} %  B {sb:.1f} %  A - B {100 * mean:+.1f} ± {100 * se:.1f} points (one SE)")
    print(f"results differ in {changed} games")


if __name__ == "__main__":
    main()
