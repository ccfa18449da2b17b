#!/usr/bin/env python3
"""Each engine's score with white and with black in a match PGN, and how the game pairs split.

Why: atomic favours white, and when both engines get stronger (more nodes) an opening may be
won by the side it favours whoever plays it: pairs that one engine won twice become one win
each, and the stronger engine's score falls towards 50 % with neither engine having got worse.
This script tells whether a fall is of that kind (pairs "split by colour" grow, the stronger
engine's score with white holds) or a fall with both colours alike (JOURNAL.md, session 32:
gen3 against Fairy-Stockfish lost 12 points with white and 12 with black from 1x to 4x).

    python3 scripts/colour_split.py GAMES.pgn [ENGINE]

match.py's summary already gives engine A's score with each colour and the pentanomial, which
lumps a pair split by colour with two draws; what this adds is which colour won the split pairs,
for a PGN read again later. ENGINE (default: the White of the first game) is the engine whose
view the pairs are counted from. Needs only the standard library: it reads the White, Black,
Result and Opening headers (match.py writes `[Opening "#N: ..."]`, one opening per colour-swapped
pair).
"""
import re
import sys
from collections import defaultdict

HEADER = re.compile(r'^\[(\w+) "(.*)"\]\s*$')
SCORE = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


def games(path: str) -> list[dict[str, str]]:
    """The header tags of every game in the file, in order."""
    out: list[dict[str, str]] = []
    current: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = HEADER.match(line)
            if not m:
                continue
            if m.group(1) == "Event" and current:
                out.append(current)
                current = {}
            current[m.group(1)] = m.group(2)
    if current:
        out.append(current)
    return out


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    tags = [g for g in games(sys.argv[1]) if g.get("Result") in SCORE]
    if not tags:
        sys.exit(f"colour_split: no finished game in {sys.argv[1]}")
    us = sys.argv[2] if len(sys.argv) == 3 else tags[0]["White"]
    names = sorted({g["White"] for g in tags} | {g["Black"] for g in tags})
    if us not in names:
        sys.exit(f"colour_split: no engine named '{us}' (the PGN has {', '.join(names)})")

    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])
    pairs: dict[str, dict[str, float]] = defaultdict(dict)
    for g in tags:
        white_score = SCORE[g["Result"]]
        for name, colour, score in ((g["White"], "white", white_score),
                                    (g["Black"], "black", 1.0 - white_score)):
            totals[(name, colour)][0] += score
            totals[(name, colour)][1] += 1
        opening = g.get("Opening", "").split(":")[0]
        if opening and us in (g["White"], g["Black"]):
            colour = "white" if g["White"] == us else "black"
            pairs[opening][colour] = white_score if colour == "white" else 1.0 - white_score

    for name in names:
        parts = []
        for colour in ("white", "black"):
            score, n = totals[(name, colour)]
            if n:
                parts.append(f"as {colour} {score:g}/{n} ({100 * score / n:.1f} %)")
        print(f"{name}: {', '.join(parts)}")

    kinds: dict[str, int] = defaultdict(int)
    for result in pairs.values():
        if len(result) != 2:
            continue
        w, b = result["white"], result["black"]
        if w + b == 2:
            kinds[f"{us} won both"] += 1
        elif w + b == 0:
            kinds[f"{us} lost both"] += 1
        elif w == 1 and b == 0:
            kinds["white won both (split by colour)"] += 1
        elif w == 0 and b == 1:
            kinds["black won both (split by colour)"] += 1
        elif w + b == 1:
            kinds["two draws"] += 1
        elif w + b > 1:
            kinds[f"{us} 1.5"] += 1
        else:
            kinds[f"{us} 0.5"] += 1
    done = sum(kinds.values())
    print(f"pairs ({done}, from {us}'s view): "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
