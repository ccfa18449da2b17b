#!/usr/bin/env python3
"""Two matches of one engine against the same opponent, compared game for game.

Why: node-limited matches replay exactly (both searches are deterministic on one thread), so
two settings of our engine played against Fairy-Stockfish on the same openings and colours
differ only where the setting changed a game. Comparing the two scores game by game (the
mean of the per-game differences and its standard error) removes the openings' own variance,
which dominates an unpaired comparison: 100 games give about ±4 points paired where each score
alone carries about ±4.5 and their difference ±6 (JOURNAL.md, sessions 36-37).

    python3 scripts/paired.py A.pgn B.pgn [ENGINE]

A game is identified by its opening (match.py writes `[Opening "#N: ..."]`) and ENGINE's
colour (default `ours`, the name `scripts/fsf_match.sh` gives our engine). Prints each
file's score over the games both hold, the paired difference A - B in points (percent) with
one standard error, how many games differ in result, and the identical-move games. Needs
only the standard library.
"""
import math
import re
import sys

HEADER = re.compile(r'^\[(\w+) "(.*)"\]\s*$')
SCORE = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def games(path: str, engine: str) -> dict[tuple[str, str], tuple[float, str]]:
    """(opening, engine's colour) -> (engine's score, the moves) for every finished game."""
    out: dict[tuple[str, str], tuple[float, str]] = {}
    tags: dict[str, str] = {}
    moves: list[str] = []

    def close() -> None:
        result = tags.get("Result")
        if result not in SCORE:
            return
        if tags.get("White") == engine:
            colour, score = "white", SCORE[result]
        elif tags.get("Black") == engine:
            colour, score = "black", 1.0 - SCORE[result]
        else:
            return
        key = (tags.get("Opening", "?"), colour)
        if key in out:
            raise SystemExit(f"{path}: two games of opening {key[0]!r} with {engine} {colour}")
        out[key] = (score, " ".join(moves))

    with open(path, encoding="utf-8") as f:
        for line in f:
            m = HEADER.match(line)
            if m:
                if m.group(1) == "Event" and tags:
                    close()
                    tags, moves = {}, []
                tags[m.group(1)] = m.group(2)
            elif line.strip():
                # Comments hold times and scores that differ between runs; keep the moves.
                moves.append(re.sub(r"\{[^}]*\}", "", line).strip())
    if tags:
        close()
    return out


def main() -> None:
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    engine = sys.argv[3] if len(sys.argv) == 4 else "ours"
    a, b = games(sys.argv[1], engine), games(sys.argv[2], engine)
    keys = sorted(set(a) & set(b))
    if not keys:
        raise SystemExit(f"no game of {engine!r} is in both files")
    diffs = [a[k][0] - b[k][0] for k in keys]
    n = len(keys)
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else 0.0
    se = math.sqrt(var / n)
    sa = 100.0 * sum(a[k][0] for k in keys) / n
    sb = 100.0 * sum(b[k][0] for k in keys) / n
    changed = sum(1 for d in diffs if d != 0)
    same = sum(1 for k in keys if a[k][1] == b[k][1])
    print(f"games in both: {n} (only in A: {len(a) - n}, only in B: {len(b) - n})")
    print(f"A {sa:.1f} %  B {sb:.1f} %  A - B {100 * mean:+.1f} ± {100 * se:.1f} points (one SE)")
    print(f"results differ in {changed} games; identical moves in {same}")


if __name__ == "__main__":
    main()
