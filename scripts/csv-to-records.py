#!/usr/bin/env python3
"""Converts labelled-position CSV files (`fen,score_stm_cp,quiet,result_white`, plain or .gz: the
Fairy-Stockfish-labelled sets in data/ and ../shared/atomic/labelled.csv) into the training-data
format of `atomic-bot datagen` (src/datagen/record.rs), so the trainer can learn from them too.

Kept: rows whose score is not a mate score; with --quiet only the quiet ones (not in check, no legal
capture: about a sixth of these sets, as atomic positions nearly always have a capture). The best
move is unknown: it is written as a1a1 (no consumer of these records uses it).

    python3 scripts/csv-to-records.py [--quiet] OUT.bin IN.csv[.gz] ...
"""
import csv
import gzip
import struct
import sys

ROLES = "pnbrqk"
CORNERS = {"K": 0, "Q": 1, "k": 2, "q": 3}
SCORE_LIMIT = 10_000


def encode(fen, score, result_stm):
    placement, turn, castling, ep = fen.split()[:4]
    squares = []
    for rank_index, row in enumerate(placement.split("/")):
        rank = 7 - rank_index
        file = 0
        for ch in row:
            if ch.isdigit():
                file += int(ch)
                continue
            color = 0 if ch.isupper() else 1
            squares.append((rank * 8 + file, color << 3 | ROLES.index(ch.lower())))
            file += 1
        if file != 8:
            raise ValueError(f"bad rank {row!r} in {fen!r}")
    squares.sort()
    if len(squares) > 32:
        raise ValueError(f"more than 32 units in {fen!r}")
    occupied = 0
    nibbles = bytearray(16)
    for i, (sq, code) in enumerate(squares):
        occupied |= 1 << sq
        nibbles[i // 2] |= code << (4 * (i % 2))
    rights = 0 if castling == "-" else sum(1 << CORNERS[c] for c in castling)
    ep_byte = 0 if ep == "-" else (int(ep[1]) - 1) * 8 + (ord(ep[0]) - ord("a")) + 1
    score = max(-SCORE_LIMIT, min(SCORE_LIMIT, score))
    return (struct.pack("<Q", occupied) + bytes(nibbles)
            + struct.pack("<hBBHBB", score, result_stm, 0 if turn == "w" else 1, 0, rights, ep_byte))


def main():
    args = sys.argv[1:]
    quiet_only = "--quiet" in args
    args = [a for a in args if a != "--quiet"]
    if len(args) < 2:
        sys.exit(__doc__)
    out_path, inputs = args[0], args[1:]
    kept = seen = 0
    with open(out_path, "wb") as out:
        out.write(b"ATOMDATA" + struct.pack("<II", 1, 32))
        for path in inputs:
            opener = gzip.open if path.endswith(".gz") else open
            with opener(path, "rt", newline="") as f:
                for row in csv.DictReader(f):
                    seen += 1
                    score = int(row["score_stm_cp"])
                    if (quiet_only and row["quiet"] != "1") or abs(score) > 30000:
                        continue
                    white = float(row["result_white"])
                    stm_white = row["fen"].split()[1] == "w"
                    mover = white if stm_white else 1.0 - white
                    result = round(mover * 2)  # some sets hold an expected score, not 0, ½, 1
                    out.write(encode(row["fen"], score, result))
                    kept += 1
    print(f"{kept} of {seen} rows written to {out_path}")


if __name__ == "__main__":
    main()
