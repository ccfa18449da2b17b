# syntax=docker/dockerfile:1
#
# atomic-bot: an Atomic chess lichess bot. Build:  docker build -t atomic-bot .
# Run (see docs/DEPLOY.md):
#   docker run -d --restart unless-stopped -e LICHESS_BOT_TOKEN=lip_... \
#     -v "$PWD/config.toml:/etc/atomic-bot/config.toml:ro" atomic-bot
#
# Build stage: the same rustc and Debian 12 (glibc 2.36) as CI, which runs the exact
# `cargo build` line below outside Docker and smoke-tests the result (.ci/docker-smoke.sh).
ARG RUST_VERSION=1.95
FROM rust:${RUST_VERSION}-slim-bookworm AS build
WORKDIR /src
COPY . .
# Cache mounts keep the registry and target/ between builds; the binary is copied out of the
# cached target/ in the same step because cache mounts are not part of the image.
RUN --mount=type=cache,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,target=/usr/local/cargo/git,sharing=locked \
    --mount=type=cache,target=/src/target,sharing=locked \
    cargo build --locked --release --bin atomic-bot \
 && install -D -m 0755 target/release/atomic-bot /out/atomic-bot

# Runtime: glibc, libgcc_s and CA certificates (rustls reads the system store), no shell,
# nothing else. Debian 12 based, like the build stage, so the glibc versions match.
FROM gcr.io/distroless/cc-debian12:nonroot AS runtime
LABEL org.opencontainers.image.title="atomic-bot" \
      org.opencontainers.image.description="Atomic chess engine (MCTS) and lichess bot" \
      org.opencontainers.image.source="https://github.com/atomic-bot/atomic-bot" \
      org.opencontainers.image.licenses="MIT OR Apache-2.0"
COPY --from=build /out/atomic-bot /usr/local/bin/atomic-bot
# Built-in defaults; mount your own file read-only over it (-v ./config.toml:/etc/atomic-bot/config.toml:ro).
COPY config.example.toml /etc/atomic-bot/config.toml
# The token comes only from LICHESS_BOT_TOKEN (or a token file, e.g. a Docker secret, named by
# ATOMIC_BOT_LICHESS__TOKEN_FILE); it is never baked into the image.
# The heartbeat lives in /tmp (writable for uid 65532; use a tmpfs with a read-only root).
ENV ATOMIC_BOT_CONFIG=/etc/atomic-bot/config.toml \
    LOG_FORMAT=json
# distroless's "nonroot" user, numerically, so that runAsNonRoot checks can verify it.
USER 65532:65532
# The bot is PID 1 and handles SIGTERM itself: stop taking challenges, finish or end the running
# games as configured, exit 0. Give it time: docker stop -t 60 / stop_grace_period in compose.
STOPSIGNAL SIGTERM
# Healthy while the lichess event stream is alive: the bot rewrites a heartbeat file on every
# stream line (lichess sends a keep-alive every 6-7 s) and this command checks its age.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["/usr/local/bin/atomic-bot", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/atomic-bot"]
CMD ["lichess"]
