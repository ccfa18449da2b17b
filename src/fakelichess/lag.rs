//! Network lag for one account, charged as lichess charges bots, and the response time it
//! measures on the way; plus the in-process game stream an external opponent plays through.
//!
//! Lichess applies a bot's moves with a client lag of 0 (API.md §6): the bot's clock runs from
//! the moment the opponent's move is applied until the bot's move request is processed, so the
//! whole round trip is the bot's. A lagged account here gets that: every stream line sent to it
//! leaves half the round trip late, and every request it makes is processed half the round trip
//! after it arrives (its answer leaves another half later), while its clock runs on the server.
//!
//! On the same path the server measures the bot's response time without trusting the bot: from
//! the moment the game-stream line that made it the bot's turn was released to the bot, to the
//! moment its move request reached the server (before the inbound half of the lag).
//!
//! The middleware that applies the lag to requests and measures moves (`delay`, with
//! `Link::note_move`) is in `layers.rs`: it reads the state, which holds the [`Lags`] kept here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::FakeLichess;
use super::http::lock;

/// The lag links of the server, by bearer token.
#[derive(Default)]
pub(crate) struct Lags {
    by_token: HashMap<String, Arc<Link>>,
}

/// One lagged account's connection to the server.
pub(crate) struct Link {
    /// Half the round trip: the delay of each direction.
    one_way: Duration,
    /// When the first game-stream line showing a game at `n` moves was released: `(game, n)`.
    pub(super) released: Mutex<HashMap<(String, usize), Instant>>,
    /// Response times measured so far (line released → move request arrived).
    pub(super) responses: Mutex<Vec<Duration>>,
}

impl Link {
    /// Half the round trip: one direction of the lag.
    pub(super) async fn wait_one_way(&self) {
        if !self.one_way.is_zero() {
            tokio::time::sleep(self.one_way).await;
        }
    }

    /// Delays every line of a stream by the outbound half of the lag, in order. `game` is the
    /// game of a game stream (its state lines are timestamped for the response time).
    ///
    /// The lines are timestamped as soon as the server sends them (a first task that only
    /// forwards), and a second task releases each one at its timestamp plus the delay, so a line
    /// waiting for its release never makes the next one later than the lag.
    pub(crate) fn relay(
        self: &Arc<Self>,
        lines: impl Stream<Item = Bytes> + Send + 'static,
        game: Option<String>,
    ) -> mpsc::UnboundedReceiver<Bytes> {
        let (stamped_tx, mut stamped_rx) = mpsc::unbounded_channel::<(Instant, Bytes)>();
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = std::pin::pin!(lines);
            while let Some(line) = lines.next().await {
                if stamped_tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        let link = self.clone();
        tokio::spawn(async move {
            while let Some((sent, line)) = stamped_rx.recv().await {
                tokio::time::sleep_until(sent + link.one_way).await;
                if let Some(id) = &game {
                    link.note_release(id, &line);
                }
                if out_tx.send(line).is_err() {
                    break;
                }
            }
        });
        out_rx
    }

    /// Remembers when a game's state at `n` moves first reached the account; forgets the game
    /// once a final state has gone out.
    fn note_release(&self, game: &str, line: &[u8]) {
        let Some((plies, over)) = state_of(line) else {
            return;
        };
        let mut released = lock(&self.released);
        if over {
            released.retain(|(g, _), _| g != game);
        } else {
            released
                .entry((game.to_owned(), plies))
                .or_insert_with(Instant::now);
        }
    }
}

/// The number of moves and whether the game is over, of a `gameFull` or `gameState` line.
fn state_of(line: &[u8]) -> Option<(usize, bool)> {
    let text = std::str::from_utf8(line).ok()?;
    if !(text.contains("\"gameState\"") || text.contains("\"gameFull\"")) {
        return None;
    }
    let v: serde_json::Value = serde_json::from_str(text.trim()).ok()?;
    let state = if v["type"] == "gameFull" {
        &v["state"]
    } else {
        &v
    };
    let moves = state["moves"].as_str()?;
    let over = state["status"].as_str().is_some_and(|s| s != "started");
    Some((moves.split_ascii_whitespace().count(), over))
}

impl Lags {
    /// The link of a bearer token, if that account is lagged.
    pub(crate) fn link(&self, token: Option<&str>) -> Option<Arc<Link>> {
        self.by_token.get(token?).cloned()
    }
}

impl FakeLichess {
    /// Lags every request and stream line of the account with this bearer token by half of
    /// `round_trip` each way (see the module doc), and measures its response times. Applies to
    /// requests and streams opened from now on.
    pub fn set_lag(&self, token: &str, round_trip: Duration) {
        let link = Arc::new(Link {
            one_way: round_trip / 2,
            released: Mutex::new(HashMap::new()),
            responses: Mutex::new(Vec::new()),
        });
        self.with(|i| i.lags.by_token.insert(token.to_owned(), link));
    }

    /// The response times measured for the lagged account of this token: from the release of
    /// the game-stream line that made it its turn to the arrival of its move request.
    pub fn response_times(&self, token: &str) -> Vec<Duration> {
        self.with(|i| i.lags.link(Some(token)))
            .map(|l| lock(&l.responses).clone())
            .unwrap_or_default()
    }

    /// A game stream opened in-process, as `user` would read it over HTTP (`gameFull`, then a
    /// `gameState` on every change, keep-alives; it ends after the final state): how an
    /// opponent that is not an HTTP client (the arena's UCI engine) follows its game, with no
    /// lag and no HTTP in its way.
    pub fn game_stream(
        &self,
        game: &str,
        user: &str,
    ) -> Result<mpsc::UnboundedReceiver<Bytes>, String> {
        match self.with(|i| i.open_game_stream(&user.to_lowercase(), "in-process", game)) {
            Ok(stream) => Ok(stream.rx),
            Err((status, e)) => Err(format!("game stream {game}: {status} {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio_stream::wrappers::UnboundedReceiverStream;

    use super::*;

    #[test]
    fn state_lines_are_read_and_others_ignored() {
        let full = br#"{"type":"gameFull","id":"x","state":{"type":"gameState","moves":"e2e4 e7e5","status":"started"}}"#;
        assert_eq!(state_of(full), Some((2, false)));
        let state = br#"{"moves":"e2e4","status":"mate","type":"gameState","winner":"white"}"#;
        assert_eq!(state_of(state), Some((1, true)));
        let start = br#"{"moves":"","status":"started","type":"gameState"}"#;
        assert_eq!(state_of(start), Some((0, false)));
        assert_eq!(state_of(b""), None);
        assert_eq!(state_of(br#"{"type":"chatLine","text":"gameState"}"#), None);
    }

    #[tokio::test(start_paused = true)]
    async fn relay_delays_each_line_from_when_it_was_sent() {
        let link = Arc::new(Link {
            one_way: Duration::from_millis(100),
            released: Mutex::new(HashMap::new()),
            responses: Mutex::new(Vec::new()),
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let mut out = link.relay(UnboundedReceiverStream::new(rx), Some("g".into()));
        let t0 = Instant::now();
        tx.send(Bytes::from_static(
            b"{\"type\":\"gameState\",\"moves\":\"e2e4\",\"status\":\"started\"}\n",
        ))
        .unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        tx.send(Bytes::from_static(b"\n")).unwrap();
        let first = out.recv().await.unwrap();
        assert!(first.starts_with(b"{"));
        assert_eq!(t0.elapsed(), Duration::from_millis(100));
        assert_eq!(out.recv().await.unwrap(), Bytes::from_static(b"\n"));
        // The second line waited its own 100 ms, not 100 ms after the first was released.
        assert_eq!(t0.elapsed(), Duration::from_millis(130));
        assert!(lock(&link.released).contains_key(&("g".to_owned(), 1)));
        drop(tx);
        assert!(out.recv().await.is_none());
    }

    /// Lines of an HTTP ND-JSON body, one at a time.
    async fn next_line(body: &mut reqwest::Response, buf: &mut String) -> String {
        loop {
            if let Some(i) = buf.find('\n') {
                let line = buf[..i].to_owned();
                buf.drain(..=i);
                if !line.trim().is_empty() {
                    return line;
                }
                continue;
            }
            let chunk = body.chunk().await.unwrap().expect("the stream ended");
            buf.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    #[tokio::test]
    async fn the_lagged_player_is_charged_the_round_trip_and_its_response_measured() {
        use crate::fakelichess::{ChallengeSpec, FakeAccount, FakeConfig};
        let fake = FakeLichess::start(FakeConfig {
            accounts: vec![
                FakeAccount::new("Lagged", "tok_a", true),
                FakeAccount::new("Local", "tok_b", true),
            ],
            ..FakeConfig::default()
        })
        .await
        .unwrap();
        fake.set_lag("tok_a", Duration::from_millis(400));
        let http = reqwest::Client::new();
        let post = |path: String| {
            http.post(format!("{}{path}", fake.url()))
                .bearer_auth("tok_a")
                .send()
        };
        let spec = ChallengeSpec {
            clock: Some((60, 0)),
            color: "white".into(),
            ..ChallengeSpec::default()
        };
        let id = fake.challenge("local", "lagged", &spec).unwrap();
        let t = Instant::now();
        let r = post(format!("/api/challenge/{id}/accept")).await.unwrap();
        assert!(r.status().is_success());
        // 200 ms in, 200 ms back.
        assert!(
            t.elapsed() >= Duration::from_millis(400),
            "{:?}",
            t.elapsed()
        );
        let mut stream = http
            .get(format!("{}/api/bot/game/stream/{id}", fake.url()))
            .bearer_auth("tok_a")
            .send()
            .await
            .unwrap();
        let mut buf = String::new();
        assert!(next_line(&mut stream, &mut buf).await.contains("gameFull"));
        for (white, black) in [("e2e4", "e7e5"), ("g1f3", "b8c6")] {
            let t = Instant::now();
            fake.play(&id, "local", white).unwrap();
            let line = next_line(&mut stream, &mut buf).await;
            assert!(line.contains(white), "{line}");
            assert!(
                t.elapsed() >= Duration::from_millis(200),
                "{:?}",
                t.elapsed()
            );
            let r = post(format!("/api/bot/game/{id}/move/{black}"))
                .await
                .unwrap();
            assert!(r.status().is_success());
            // The echo of our own move.
            assert!(next_line(&mut stream, &mut buf).await.contains(black));
        }
        // Black's clock ran from White's second move (the clocks start after both first
        // moves) through the line's delay and the request's: at least 400 ms of it.
        let game = fake.game(&id).unwrap();
        assert_eq!(game.moves.len(), 4);
        assert!(game.btime <= 60_000 - 400, "btime {}", game.btime);
        // Both of the lagged player's turns were measured, without the lag in them.
        let responses = fake.response_times("tok_a");
        assert_eq!(responses.len(), 2, "{responses:?}");
        assert!(
            responses.iter().all(|r| *r < Duration::from_millis(200)),
            "{responses:?}"
        );
    }
}
