#!/usr/bin/env bash
# Lazy SMP scaling of the alpha-beta search: time to a fixed depth and nodes per second at
# several thread counts, over UCI, on the bench positions (src/uci/bench.rs) and the 20
# middlegames of data/middlegames.epd. Needs bash and the release binary, nothing else
# (awk for the arithmetic). docs/SPEED.md says how to read the table.
#
#   scripts/smp-scaling.sh [--bin target/release/atomic-bot] [--threads 1,2,4,8,16]
#                          [--depth 16] [--repeats 3] [--hash 128] [--csv FILE]
#                          [--option Name=value ...]
#
# Defaults: the thread counts are 1, 2, 4, ... up to the cores this shell may use (nproc
# honours the affinity mask; with a cgroup CPU quota below that, pass --threads); 1 is always
# measured, as the reference. The defaults finish within 8 minutes on a 16-core machine
# (1, 2, 4, 8, 16 threads, depth 16, 3 repeats): one thread needs 18.1 M nodes for one round of
# the 28 positions, so about 2.5 minutes where a core runs 1 M nodes/s and helpers give 1.6x at
# 2 threads, 2.5x at 4 ..., and 7.5 minutes at worst (0.6 M nodes/s and no speed-up at all).
#
# Every search starts from a cleared table (`ucinewgame`), so each is a time to depth from
# nothing. Repeats go round all thread counts before the next repeat, so a change in the
# machine's load spreads over every column instead of one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$here/target/release/atomic-bot"
depth=16
repeats=3
hash=128
csv=""
threads=""
options=()

die() { echo "smp-scaling: $*" >&2; exit 2; }

usage() {
    sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin) bin=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        --depth) depth=$2; shift 2 ;;
        --repeats) repeats=$2; shift 2 ;;
        --hash) hash=$2; shift 2 ;;
        --csv) csv=$2; shift 2 ;;
        --option) [[ "$2" == *=* ]] || die "--option takes Name=value, not '$2'"
            options+=("$2"); shift 2 ;;
        -h|--help) usage 0 ;;
        *) echo "smp-scaling: unknown argument '$1'" >&2; usage 2 >&2 ;;
    esac
done

[[ -x "$bin" ]] || die "no executable '$bin' (cargo build --release, or --bin PATH)"
[[ "$depth" =~ ^[1-9][0-9]*$ ]] || die "--depth must be a positive integer, not '$depth'"
[[ "$repeats" =~ ^[1-9][0-9]*$ ]] || die "--repeats must be a positive integer, not '$repeats'"
[[ "$hash" =~ ^[1-9][0-9]*$ ]] || die "--hash must be a positive integer (MB), not '$hash'"

if [[ -z "$threads" ]]; then
    cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
    threads=1
    for ((n = 2; n <= cores; n *= 2)); do threads+=",$n"; done
fi
IFS=',' read -r -a counts <<< "$threads"
for n in "${counts[@]}"; do
    [[ "$n" =~ ^[1-9][0-9]*$ && "$n" -le 256 ]] || die "--threads: '$n' is not a count from 1 to 256"
done
[[ " ${counts[*]} " == *" 1 "* ]] || counts=(1 "${counts[@]}")

# The positions: "set<TAB>fen" lines.
positions=()
bench_src="$here/src/uci/bench.rs"
[[ -r "$bench_src" ]] || die "cannot read the bench positions in $bench_src"
while IFS= read -r fen; do
    positions+=("bench	$fen")
done < <(sed -n '/^pub const POSITIONS/,/^];/p' "$bench_src" | grep -o '"[^"]*"' | tr -d '"')
epd="$here/data/middlegames.epd"
[[ -r "$epd" ]] || die "cannot read $epd"
while IFS= read -r line; do
    [[ -z "${line// }" || "$line" == \#* ]] && continue
    read -r f1 f2 f3 f4 ops <<< "$line"
    hmvc=0 fmvn=1
    [[ "$ops" =~ hmvc\ ([0-9]+)\; ]] && hmvc=${BASH_REMATCH[1]}
    [[ "$ops" =~ fmvn\ ([0-9]+)\; ]] && fmvn=${BASH_REMATCH[1]}
    positions+=("middlegame	$f1 $f2 $f3 $f4 $hmvc $fmvn")
done < "$epd"
[[ ${#positions[@]} -gt 0 ]] || die "no positions"

coproc ENGINE { exec "$bin" uci 2>&1; }
engine_pid=$ENGINE_PID
trap 'kill "$engine_pid" 2>/dev/null || true' EXIT
send() { printf '%s\n' "$1" >&"${ENGINE[1]}"; }
# Reads engine lines until one starts with $1; the line is left in $line.
expect() {
    while IFS= read -r -t 900 line <&"${ENGINE[0]}"; do
        [[ "$line" == "$1"* ]] && return 0
    done
    die "the engine stopped answering (waiting for '$1')"
}

send uci; expect uciok
send "setoption name SearchAlgorithm value alphabeta"
send "setoption name Hash value $hash"
for o in "${options[@]}"; do send "setoption name ${o%%=*} value ${o#*=}"; done

results=$(mktemp)
trap 'kill "$engine_pid" 2>/dev/null || true; rm -f "$results"' EXIT
echo "set,position,threads,repeat,depth,time_ms,nodes,bestmove" > "$results"

echo "smp-scaling: $("$bin" --version 2>/dev/null || echo "$bin"), depth $depth, hash $hash MB," \
    "threads ${counts[*]}, $repeats repeat(s), ${#positions[@]} positions," \
    "$(nproc 2>/dev/null || echo '?') cores usable, load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
start=$SECONDS
for ((r = 1; r <= repeats; r++)); do
    for n in "${counts[@]}"; do
        send "setoption name Threads value $n"
        t0=$SECONDS
        i=0
        for entry in "${positions[@]}"; do
            i=$((i + 1))
            set_name=${entry%%	*}
            fen=${entry#*	}
            send "ucinewgame"
            send "position fen $fen"
            send "isready"; expect readyok
            send "go depth $depth"
            last=""
            while true; do
                expect ""
                if [[ "$line" == "info depth $depth "* ]]; then last=$line; fi
                [[ "$line" == bestmove* ]] && break
            done
            [[ "$last" =~ \ time\ ([0-9]+) ]] || die "no 'info depth $depth ... time' line for $fen"
            ms=${BASH_REMATCH[1]}
            [[ "$last" =~ \ nodes\ ([0-9]+) ]] || die "no 'info depth $depth ... nodes' line for $fen"
            nodes=${BASH_REMATCH[1]}
            best=${line#bestmove }; best=${best%% *}
            echo "$set_name,$i,$n,$r,$depth,$ms,$nodes,$best" >> "$results"
        done
        echo "  repeat $r, $n thread(s): $((SECONDS - t0)) s" >&2
    done
done
send quit

echo
echo "Time to depth $depth (mean per position over $repeats repeat(s)) and speed, by thread count:"
awk -F, '
NR > 1 {
    rows++; rset[rows] = $1; rpos[rows] = $2; rn[rows] = $3; rbest[rows] = $8
    if ($3 == 1) { votes[$2, $8]++; if (votes[$2, $8] > top[$2]) { top[$2] = votes[$2, $8]; mode[$2] = $8 } }
    for (s = 0; s < 2; s++) {
        set = s ? "all" : $1
        key = set SUBSEP $3
        t[key] += $6; nodes[key] += $7; runs[key]++
        if (!(set in seen)) { seen[set] = 1; order[++nsets] = set }
        if (!($3 in seenn)) { seenn[$3] = 1; ns[++nn] = $3 }
    }
}
END {
    # How often a search ended on the move one thread plays most often there: where threads
    # change the move, the time to depth compares two different searches.
    for (i = 1; i <= rows; i++) {
        for (s = 0; s < 2; s++) {
            key = (s ? "all" : rset[i]) SUBSEP rn[i]
            same[key] += (rbest[i] == mode[rpos[i]])
        }
    }
    for (k = 1; k <= nsets; k++) {
        set = order[k]
        if (set == "all") continue
        printf "\n%s positions:\n", set
        show(set)
    }
    printf "\nall positions:\n"
    show("all")
}
function show(set,   i, n, key, mean, nps, t1, nps1, ref) {
    ref = set SUBSEP 1
    t1 = t[ref] / runs[ref]
    nps1 = nodes[ref] / (t[ref] > 0 ? t[ref] : 1) * 1000
    printf "%8s %14s %9s %12s %12s %12s %10s\n", "threads", "time/pos (ms)", "speed-up", "nodes/s", "nps scaling", "nodes/pos", "same move"
    for (i = 1; i <= nn; i++) {
        n = ns[i]; key = set SUBSEP n
        if (!(key in runs)) continue
        mean = t[key] / runs[key]
        nps = nodes[key] / (t[key] > 0 ? t[key] : 1) * 1000
        printf "%8d %14.0f %8.2fx %12.0f %11.2fx %12.0f %9.0f%%\n", n, mean, (mean > 0 ? t1 / mean : 0), nps, (nps1 > 0 ? nps / nps1 : 0), nodes[key] / runs[key], 100 * same[key] / runs[key]
    }
}' "$results"
echo
echo "(speed-up = mean time to depth at 1 thread / at N threads; nodes/s = all threads' nodes /" \
    "time; nodes/pos = mean nodes to depth, all threads: on cores that are not free, N x nodes/pos" \
    "at 1 / at N estimates the speed-up; same move = searches that ended on the move one thread" \
    "plays most often in that position; $((SECONDS - start)) s in all)"
if [[ -n "$csv" ]]; then
    cp "$results" "$csv"
    echo "every search: $csv"
fi
