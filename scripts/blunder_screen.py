#!/usr/bin/env python3
"""A blunder screen: the moves of ours that Fairy-Stockfish refuted in node-limited games,
searched again by a build or setting and judged by Fairy-Stockfish.

Why: a 4x node-limited match (issue 30) takes about 70 minutes for 100 games and tells two
settings apart only by several points. The losses of such a match come from a few moves; this
replays just those. `collect` takes, from match PGNs (`scripts/fsf_match.sh`, our moves'
comments hold our score, FSF's its own), each move of ours where we scored at least -0.5 and
FSF's answer scored +2.00 or more. `run` searches each such position (the game's moves from
the start, so repetitions count; a fresh table) with the engine at NODES and lets FSF at
ORACLE nodes judge the position after the played move (a blunder when FSF scores >= +1.00
there) and after the engine's move (avoided when FSF scores < +1.00). Both searches are one
thread and node-limited, so a run is deterministic and does not care about the machine's
load. The defaults searched afresh already avoid some of the game's blunders (another table
than in the game), so compare a setting with the defaults' run, not with zero.

How far to trust it (JOURNAL, sessions 46-47): on the 121 blunders of session 45's 4x games
the defaults avoid 9 to 12 under perturbations that change nothing in the search (other node
counts, another table size), and no setting tried avoided more; one that screened as well as
the defaults (AbNullVerify=12, 11) lost 12 points in 4x games. A difference of three is noise,
and a setting is not shown better here: it flags settings that are likely worse, no more.

Usage: USAGE below, which bad arguments print.

FSF (env) is the Fairy-Stockfish binary (default /tmp/fsf/fairy-stockfish); needs python-chess.
FSF's judgements are cached beside OUT.json (OUT.json.oracleN), so a second setting costs
only its own searches and the judgements of the moves it changes.
"""
import os, sys, json, subprocess, chess.pgn

USAGE = """usage:
    python3 scripts/blunder_screen.py collect OUT.json GAMES.pgn...
    python3 scripts/blunder_screen.py run OUT.json BIN NODES ORACLE [Option=value ...]"""

FSF = os.environ.get("FSF", "/tmp/fsf/fairy-stockfish")

def val(c):
    c = c.strip().split()
    if not c or c[0] == "book": return None
    s = c[0]
    if s.startswith("#"): return 100.0 if int(s[1:]) > 0 else -100.0
    return float(s)

def collect(out, paths):
    pos = []
    for path in paths:
        f = open(path)
        while (g := chess.pgn.read_game(f)):
            us_white = g.headers["White"] == "ours"
            nodes = list(g.mainline())
            moves = [n.move.uci() for n in nodes]
            for i, n in enumerate(nodes):
                ours = (i % 2 == 0) == us_white
                if not ours or i + 1 >= len(nodes): continue
                a, b = val(n.comment), val(nodes[i + 1].comment)
                if a is None or b is None: continue
                if a >= -0.5 and b >= 2.0:
                    pos.append({"game": f"{path}#{g.headers['Round']}", "moves": moves[:i], "played": moves[i], "ours": a, "fsf": b})
    json.dump(pos, open(out, "w"), indent=0)
    print(len(pos), "positions")

class Engine:
    def __init__(self, cmd, opts, fsf=False):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.send("uci")
        if fsf: self.send("setoption name UCI_Variant value atomic")
        self.send("setoption name Hash value 64")
        for o in opts:
            k, v = o.split("=", 1); self.send(f"setoption name {k} value {v}")
    def send(self, s): self.p.stdin.write(s + "\n"); self.p.stdin.flush()
    def go(self, moves, nodes):
        self.send("ucinewgame"); self.send("position startpos moves " + " ".join(moves)); self.send(f"go nodes {nodes}")
        score = None
        for line in self.p.stdout:
            w = line.split()
            if w and w[0] == "info" and "score" in w:
                k = w.index("score")
                score = int(w[k + 2]) if w[k + 1] == "cp" else (100000 if int(w[k + 2]) > 0 else -100000)
            if w and w[0] == "bestmove": return w[1], score
        sys.exit(f"blunder_screen: {self.p.args[0]} ended without a bestmove (position {' '.join(moves)})")

def run(path, binary, nodes, oracle, opts):
    pos = json.load(open(path))
    cache_path = path + f".oracle{oracle}"
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    def judge(moves):
        k = " ".join(moves)
        if k not in cache:
            cache[k] = fsf.go(moves, oracle)[1]
            json.dump(cache, open(cache_path, "w"))
        return cache[k]
    ours = Engine([binary, "uci"], opts); fsf = Engine([FSF], [], fsf=True)
    confirmed = same = avoided = 0
    for p in pos:
        base = judge(p["moves"] + [p["played"]])
        if base is None or base < 100: continue   # the oracle does not call the played move a blunder
        confirmed += 1
        mv, _ = ours.go(p["moves"], nodes)
        if mv == p["played"]:
            same += 1; continue
        s = judge(p["moves"] + [mv])
        if s is not None and s < 100: avoided += 1
        print(p["game"], len(p["moves"]), p["played"], mv, base, s, flush=True)
    print(f"confirmed {confirmed}, same move {same}, avoided {avoided}  ({binary} {' '.join(opts)} nodes {nodes} oracle {oracle})")

if len(sys.argv) >= 4 and sys.argv[1] == "collect":
    collect(sys.argv[2], sys.argv[3:])
elif len(sys.argv) >= 6 and sys.argv[1] == "run" and sys.argv[4].isdigit() and sys.argv[5].isdigit():
    run(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:])
else:
    sys.exit(USAGE)
