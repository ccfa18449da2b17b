//! Optional Prometheus metrics: lock-free counters and a tiny text endpoint.
//!
//! Off by default. When enabled, [`serve`] answers `GET /metrics` on a configured local address
//! (`127.0.0.1:9464` by default: the bot is not a web service, and metrics must not be exposed
//! to the internet by accident) in the Prometheus text exposition format 0.0.4.
//!
//! Why plain atomics rather than the `prometheus` crate: the whole surface is a dozen numbers,
//! the counters are bumped from game tasks and the searcher's callers, and atomics keep that
//! free of locks and of another dependency. The one route is served by axum, which the binary
//! links anyway (the local lichess server of `demo` runs on it), so HTTP parsing, `HEAD` and
//! graceful shutdown are not ours to get right. Counters only ever grow (until restart), as
//! Prometheus expects; `rate()` does the rest.
//!
//! [`Metrics`] is shared as `Arc<Metrics>`; every method takes `&self`. A disabled endpoint costs
//! nothing but the atomic adds.

use std::fmt::Write as _;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{Method, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use tokio::net::TcpListener;

use crate::telemetry::GameResult;

/// Upper bounds (seconds) of the latency histogram buckets: from the few-millisecond overhead we
/// aim for up to the long thinks of classical games.
const LATENCY_BOUNDS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

/// A fixed-bucket histogram made of atomics. Buckets are stored non-cumulatively (one add per
/// observation) and summed when rendered.
#[derive(Debug)]
pub struct Histogram {
    /// One counter per bound in [`LATENCY_BOUNDS`], plus the `+Inf` overflow bucket.
    buckets: [AtomicU64; LATENCY_BOUNDS.len() + 1],
    /// Sum of observations in microseconds (integer, so it can be atomic).
    sum_micros: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            sum_micros: AtomicU64::new(0),
        }
    }
}

impl Histogram {
    /// Records one observation.
    pub fn observe(&self, value: Duration) {
        let secs = value.as_secs_f64();
        let index = LATENCY_BOUNDS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(LATENCY_BOUNDS.len());
        self.buckets[index].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(value.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).sum()
    }

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} histogram");
        let mut cumulative = 0u64;
        for (bound, bucket) in LATENCY_BOUNDS.iter().zip(&self.buckets) {
            cumulative += bucket.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {cumulative}");
        }
        cumulative += self.buckets[LATENCY_BOUNDS.len()].load(Ordering::Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {cumulative}");
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}");
        let _ = writeln!(out, "{name}_count {cumulative}");
    }
}

/// Every number the bot exports. Shared as `Arc<Metrics>`.
#[derive(Debug, Default)]
pub struct Metrics {
    /// Games that ended with a result (won + lost + drawn; aborted and left games are not
    /// played games).
    pub games_played: AtomicU64,
    /// Games we won.
    pub games_won: AtomicU64,
    /// Games we lost.
    pub games_lost: AtomicU64,
    /// Games drawn.
    pub games_drawn: AtomicU64,
    /// Games aborted before both sides moved.
    pub games_aborted: AtomicU64,
    /// Games the bot left without lichess's final state (result unknown): its abort or resign
    /// went unanswered, lichess refused the game stream, or the game task kept failing.
    pub games_left: AtomicU64,
    /// Games we lost on time: the signal to raise the move overhead.
    pub time_forfeits: AtomicU64,
    /// Game tasks currently running.
    pub games_in_progress: AtomicI64,
    /// Event-stream reconnections (each new connection after the first).
    pub stream_reconnects: AtomicU64,
    /// HTTP 429 answers from lichess, any endpoint.
    pub rate_limited: AtomicU64,
    /// Challenges we sent (matchmaking).
    pub challenges_sent: AtomicU64,
    /// Incoming challenges accepted or queued whose games have not started (for `!queue`).
    pub challenges_waiting: AtomicI64,
    /// From reading the game state that makes it our turn to the move request's response,
    /// think time included.
    pub move_latency: Histogram,
    /// The same latency minus the think time: our own overhead plus the network, which is what
    /// `move_overhead_ms` must cover since bots get no lag compensation.
    pub move_overhead: Histogram,
}

impl Metrics {
    /// A fresh set of zeroed metrics.
    pub fn new() -> Arc<Metrics> {
        Arc::new(Metrics::default())
    }

    /// Counts a finished game.
    pub fn record_game(&self, result: GameResult, time_forfeit: bool) {
        let counter = match result {
            GameResult::Win => &self.games_won,
            GameResult::Loss => &self.games_lost,
            GameResult::Draw => &self.games_drawn,
            GameResult::Aborted => &self.games_aborted,
            GameResult::Left => &self.games_left,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if matches!(
            result,
            GameResult::Win | GameResult::Loss | GameResult::Draw
        ) {
            self.games_played.fetch_add(1, Ordering::Relaxed);
        }
        if time_forfeit {
            self.time_forfeits.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a move: `latency` from our-turn state to the move response, `think` the part spent
    /// searching.
    pub fn record_move(&self, latency: Duration, think: Duration) {
        self.move_latency.observe(latency);
        self.move_overhead.observe(latency.saturating_sub(think));
    }

    /// A game task started; returns a guard that marks it finished when dropped, so that a
    /// panicking or cancelled task cannot leave the gauge too high.
    pub fn game_started(self: &Arc<Self>) -> GameGuard {
        self.games_in_progress.fetch_add(1, Ordering::Relaxed);
        GameGuard(Arc::clone(self))
    }

    /// Adds one to one of the counters above: `Metrics::inc(&metrics.rate_limited)`.
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Renders everything in the Prometheus text format.
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(4096);
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let counters: [(&str, &str, u64); 11] = [
            (
                "atomic_bot_games_played_total",
                "Games finished with a result (aborted and left games excluded).",
                load(&self.games_played),
            ),
            (
                "atomic_bot_games_won_total",
                "Games won.",
                load(&self.games_won),
            ),
            (
                "atomic_bot_games_lost_total",
                "Games lost.",
                load(&self.games_lost),
            ),
            (
                "atomic_bot_games_drawn_total",
                "Games drawn.",
                load(&self.games_drawn),
            ),
            (
                "atomic_bot_games_aborted_total",
                "Games aborted before both sides moved.",
                load(&self.games_aborted),
            ),
            (
                "atomic_bot_games_left_total",
                "Games left without a final state from lichess (result unknown).",
                load(&self.games_left),
            ),
            (
                "atomic_bot_time_forfeits_total",
                "Games lost on time.",
                load(&self.time_forfeits),
            ),
            (
                "atomic_bot_stream_reconnects_total",
                "Event stream reconnections.",
                load(&self.stream_reconnects),
            ),
            (
                "atomic_bot_rate_limited_total",
                "HTTP 429 answers received from lichess.",
                load(&self.rate_limited),
            ),
            (
                "atomic_bot_challenges_sent_total",
                "Challenges sent by matchmaking.",
                load(&self.challenges_sent),
            ),
            (
                "atomic_bot_moves_total",
                "Moves played.",
                self.move_latency.count(),
            ),
        ];
        for (name, help, value) in counters {
            let _ = writeln!(out, "# HELP {name} {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            let _ = writeln!(out, "{name} {value}");
        }
        let _ = writeln!(
            out,
            "# HELP atomic_bot_games_in_progress Game tasks currently running."
        );
        let _ = writeln!(out, "# TYPE atomic_bot_games_in_progress gauge");
        let _ = writeln!(
            out,
            "atomic_bot_games_in_progress {}",
            self.games_in_progress.load(Ordering::Relaxed)
        );
        let _ = writeln!(
            out,
            "# HELP atomic_bot_challenges_waiting Accepted or queued challenges not started yet."
        );
        let _ = writeln!(out, "# TYPE atomic_bot_challenges_waiting gauge");
        let _ = writeln!(
            out,
            "atomic_bot_challenges_waiting {}",
            self.challenges_waiting.load(Ordering::Relaxed)
        );
        self.move_latency.render(
            &mut out,
            "atomic_bot_move_latency_seconds",
            "From our-turn game state to the move response, think time included.",
        );
        self.move_overhead.render(
            &mut out,
            "atomic_bot_move_overhead_seconds",
            "Move latency minus think time (what move_overhead_ms must cover).",
        );
        out
    }
}

/// Decrements `games_in_progress` when dropped. See [`Metrics::game_started`].
#[derive(Debug)]
pub struct GameGuard(Arc<Metrics>);

impl Drop for GameGuard {
    fn drop(&mut self) {
        self.0.games_in_progress.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Binds the metrics listener. Separate from [`serve`] so that a bad address fails at start-up
/// with a clear error, and so tests can bind `127.0.0.1:0`.
pub async fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    TcpListener::bind(addr).await.map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("metrics endpoint: cannot listen on {addr}: {e}"),
        )
    })
}

/// The endpoint's routes: `GET /metrics` (and `HEAD`, which axum answers from the same handler
/// without the body); any other path is a 404 that names the right one.
fn router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route("/metrics", get(scrape))
        .fallback(elsewhere)
        .with_state(metrics)
}

/// `GET /metrics`: the text exposition format 0.0.4.
async fn scrape(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        metrics.render(),
    )
}

/// Any other path: 404 for a read (pointing at `/metrics`), 405 for anything else, as the
/// endpoint only ever answers reads.
async fn elsewhere(method: Method) -> impl IntoResponse {
    if method == Method::GET || method == Method::HEAD {
        (StatusCode::NOT_FOUND, "try /metrics\n")
    } else {
        (StatusCode::METHOD_NOT_ALLOWED, "GET only\n")
    }
}

/// Serves `GET /metrics` on `listener` until `shutdown` completes; then stops accepting,
/// lets scrapes in flight finish, and closes the listener.
pub async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    if let Ok(addr) = listener.local_addr() {
        tracing::info!(%addr, "metrics endpoint listening on http://{addr}/metrics");
    }
    let server = axum::serve(listener, router(metrics)).with_graceful_shutdown(shutdown);
    if let Err(err) = server.await {
        tracing::warn!(error = %err, "metrics endpoint stopped");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    /// Sends `request` to `addr` and returns the whole response.
    async fn fetch(addr: SocketAddr, request: &str) -> String {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        stream.shutdown().await.unwrap(); // half-close: a truncated head ends at EOF
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        response
    }

    fn value(body: &str, name: &str) -> String {
        body.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
            .unwrap_or_else(|| panic!("{name} missing in\n{body}"))
            .to_string()
    }

    #[test]
    fn counts_games_and_forfeits() {
        let m = Metrics::new();
        m.record_game(GameResult::Win, false);
        m.record_game(GameResult::Loss, true);
        m.record_game(GameResult::Draw, false);
        m.record_game(GameResult::Aborted, false);
        m.record_game(GameResult::Left, false);
        let body = m.render();
        assert_eq!(value(&body, "atomic_bot_games_played_total"), "3");
        assert_eq!(value(&body, "atomic_bot_games_left_total"), "1");
        assert_eq!(value(&body, "atomic_bot_games_won_total"), "1");
        assert_eq!(value(&body, "atomic_bot_games_lost_total"), "1");
        assert_eq!(value(&body, "atomic_bot_games_drawn_total"), "1");
        assert_eq!(value(&body, "atomic_bot_games_aborted_total"), "1");
        assert_eq!(value(&body, "atomic_bot_time_forfeits_total"), "1");
    }

    #[test]
    fn histogram_is_cumulative() {
        let m = Metrics::new();
        m.record_move(Duration::from_millis(3), Duration::ZERO);
        m.record_move(Duration::from_millis(700), Duration::from_millis(690));
        m.record_move(Duration::from_secs(500), Duration::from_secs(499));
        let body = m.render();
        assert_eq!(
            value(
                &body,
                "atomic_bot_move_latency_seconds_bucket{le=\"0.005\"}"
            ),
            "1"
        );
        assert_eq!(
            value(&body, "atomic_bot_move_latency_seconds_bucket{le=\"1\"}"),
            "2"
        );
        assert_eq!(
            value(&body, "atomic_bot_move_latency_seconds_bucket{le=\"120\"}"),
            "2"
        );
        assert_eq!(
            value(&body, "atomic_bot_move_latency_seconds_bucket{le=\"+Inf\"}"),
            "3"
        );
        assert_eq!(value(&body, "atomic_bot_move_latency_seconds_count"), "3");
        assert_eq!(
            value(&body, "atomic_bot_move_latency_seconds_sum"),
            "500.703"
        );
        // overheads: 3 ms, 10 ms, 1 s
        assert_eq!(
            value(
                &body,
                "atomic_bot_move_overhead_seconds_bucket{le=\"0.005\"}"
            ),
            "1"
        );
        assert_eq!(
            value(
                &body,
                "atomic_bot_move_overhead_seconds_bucket{le=\"0.01\"}"
            ),
            "2"
        );
        assert_eq!(value(&body, "atomic_bot_moves_total"), "3");
    }

    #[test]
    fn gauge_follows_guards() {
        let m = Metrics::new();
        let a = m.game_started();
        let b = m.game_started();
        assert_eq!(m.games_in_progress.load(Ordering::Relaxed), 2);
        drop(a);
        drop(b);
        assert_eq!(value(&m.render(), "atomic_bot_games_in_progress"), "0");
    }

    #[test]
    fn every_sample_has_type_and_help() {
        let body = Metrics::new().render();
        for line in body.lines().filter(|l| !l.starts_with('#')) {
            let name = line.split(['{', ' ']).next().unwrap();
            let family = name
                .trim_end_matches("_bucket")
                .trim_end_matches("_sum")
                .trim_end_matches("_count");
            assert!(
                body.contains(&format!("# TYPE {family} ")),
                "no TYPE for {name}"
            );
            assert!(
                body.contains(&format!("# HELP {family} ")),
                "no HELP for {name}"
            );
        }
    }

    #[tokio::test]
    async fn scrape_over_http() {
        let metrics = Metrics::new();
        Metrics::inc(&metrics.rate_limited);
        Metrics::inc(&metrics.stream_reconnects);
        Metrics::inc(&metrics.stream_reconnects);
        let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(listener, Arc::clone(&metrics), async {
            let _ = stop_rx.await;
        }));

        let response = fetch(
            addr,
            "GET /metrics HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n",
        )
        .await;
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
        assert!(head.contains("text/plain; version=0.0.4"), "{head}");
        // Header names are case-insensitive (hyper writes them in lowercase).
        assert!(
            head.to_ascii_lowercase()
                .contains(&format!("content-length: {}", body.len())),
            "{head}"
        );
        assert_eq!(value(body, "atomic_bot_rate_limited_total"), "1");
        assert_eq!(value(body, "atomic_bot_stream_reconnects_total"), "2");

        let response = fetch(addr, "GET / HTTP/1.0\r\n\r\n").await;
        // An HTTP/1.0 request is answered in HTTP/1.0.
        assert!(response.starts_with("HTTP/1.0 404"), "{response}");
        let response = fetch(addr, "POST /metrics HTTP/1.1\r\n\r\n").await;
        assert!(response.starts_with("HTTP/1.1 405"), "{response}");
        let response = fetch(addr, "HEAD /metrics HTTP/1.1\r\n\r\n").await;
        assert!(
            response.starts_with("HTTP/1.1 200") && response.ends_with("\r\n\r\n"),
            "{response}"
        );
        let response = fetch(addr, "garbage").await; // closes its write side without a full head
        assert!(
            response.is_empty() || response.starts_with("HTTP/1.1 400"),
            "{response}"
        );

        stop_tx.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .unwrap()
            .unwrap();
        assert!(
            TcpStream::connect(addr).await.is_err(),
            "listener still open after shutdown"
        );
    }

    #[tokio::test]
    async fn bind_error_names_the_address() {
        let first = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = first.local_addr().unwrap();
        let err = bind(addr).await.unwrap_err();
        assert!(err.to_string().contains(&addr.to_string()), "{err}");
    }
}
