#!/usr/bin/env python3
"""How well the engine's evaluation agrees with Fairy-Stockfish's scores.

Reads the output of `examples/eval_csv.rs` (rows `fen,score_stm_cp,quiet,result_white,static,
quiescence`, no header) and prints, per file:

* the mean squared error between win probabilities: `sigmoid(cp / 400)` of FSF's score (400 cp
  is about the scale K that `tune_eval` fits to the results) against `sigmoid(cp / 208)` of the
  quiescence value (208 is `EvalScale`, the scale the search and the tuner map it with);
* the correlation of the two scores over level positions only (|FSF| < 300 cp), overall and
  by move number. The squared error is dominated by decided positions (mates, a piece up); the
  correlation on level positions measures what decides most moves: which of two near-equal
  positions is better. On our games it is far lower than on labelled.csv (docs/JOURNAL.md,
  "Session 7").

    python3 scripts/eval_agreement.py evals.csv [more.csv ...]
"""
import math
import sys

BUCKETS = [(1, 12), (12, 20), (20, 30), (30, 1000)]


FSF_SCALE = 400.0
EVAL_SCALE = 208.0


def sigmoid(cp, scale):
    return 1.0 / (1.0 + math.exp(-max(-4000.0, min(4000.0, cp)) / scale))


def correlation(pairs):
    n = len(pairs)
    if n < 3:
        return float("nan")
    mx = sum(x for x, _ in pairs) / n
    my = sum(y for _, y in pairs) / n
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    syy = sum((y - my) ** 2 for _, y in pairs)
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def report(path):
    squared, rows = 0.0, 0
    level = {bucket: [] for bucket in BUCKETS}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split(",")
            try:
                fsf, ours = float(fields[1]), float(fields[5])
                move = int(fields[0].split()[5])
            except (IndexError, ValueError):
                sys.exit(f"{path}:{number}: expected eval_csv output, got {line.strip()!r}")
            squared += (sigmoid(fsf, FSF_SCALE) - sigmoid(ours, EVAL_SCALE)) ** 2
            rows += 1
            if abs(fsf) < 300:
                for lo, hi in BUCKETS:
                    if lo <= move < hi:
                        level[(lo, hi)].append((fsf, ours))
    if rows == 0:
        sys.exit(f"{path}: no rows")
    everything = [pair for pairs in level.values() for pair in pairs]
    buckets = "  ".join(
        f"moves {lo}-{hi - 1 if hi < 1000 else ''}: {correlation(pairs):.3f} ({len(pairs)})"
        for (lo, hi), pairs in level.items())
    print(f"{path}: {rows} rows, MSE {squared / rows:.4f}; level positions "
          f"(|FSF| < 300 cp) correlation {correlation(everything):.3f} ({len(everything)}); "
          f"{buckets}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        report(path)


if __name__ == "__main__":
    main()
