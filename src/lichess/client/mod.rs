//! The HTTP client of the lichess Bot API, with lichess's request discipline (API.md §1.5):
//!
//! - one request at a time per kind of endpoint (a mutex per [`Endpoint`], held during the
//!   request and its retries, so parallel games queue instead of bursting);
//! - after a 429 that kind of endpoint waits `rate_limit_cooldown_ms` (60 s on lichess; the body
//!   may be HTML, it is never parsed as required JSON) and the request is then retried;
//! - a 429 (ours) or 400 (the opponent's) whose body names lichess's daily bot-versus-bot game
//!   limit (`ratelimit.key` `bot.vsBot.day`) is [`ApiError::BotGameLimit`] at once: retrying
//!   cannot help before `ratelimit.seconds`, and pausing the endpoint would refuse humans too;
//! - 5xx and network errors are retried with exponential backoff and jitter;
//! - 401 is a distinct error so the supervisor can stop the bot with a clear message;
//! - the token lives in a [`SecretString`], is sent only in the `Authorization` header and never
//!   appears in errors or logs (errors carry the endpoint and the server's message only).
//!
//! This module holds the client and that discipline; the typed calls of the Bot API are in
//! `calls`, the online move sources' single-attempt requests (a move waits on them: no retry,
//! no waiting out a 429 pause) in `online`, the endpoint kinds in [`Endpoint`] and the errors
//! in [`ApiError`].

use std::sync::{Arc, Mutex as StdMutex, RwLock};
use std::time::Duration;

use backon::BackoffBuilder;
use futures_util::{StreamExt, TryStreamExt};
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use tokio::time::Instant;

use crate::config::LichessSettings;
use crate::lichess::model::ErrorBody;
use crate::lichess::ndjson::NdjsonReader;

mod calls;
mod endpoint;
mod error;
mod online;

pub use calls::CreateAnswer;
pub use endpoint::Endpoint;
pub use error::ApiError;

/// Per-endpoint state: the single-flight lock and the 429 cooldown.
#[derive(Default)]
struct Gate {
    lock: tokio::sync::Mutex<()>,
    cooldown_until: StdMutex<Option<Instant>>,
}

impl Gate {
    async fn wait_cooldown(&self, endpoint: Endpoint) {
        let until = self.cooldown_until.lock().map_or(None, |g| *g);
        if let Some(until) = until
            && until > Instant::now()
        {
            tracing::info!(%endpoint, wait_ms = (until - Instant::now()).as_millis() as u64,
                "waiting for the rate-limit cooldown");
            tokio::time::sleep_until(until).await;
        }
    }

    fn start_cooldown(&self, d: Duration) {
        if let Ok(mut g) = self.cooldown_until.lock() {
            *g = Some(Instant::now() + d);
        }
    }
}

/// Reader over a streaming response body.
pub type BodyReader = NdjsonReader<
    tokio_util::io::StreamReader<
        futures_util::stream::BoxStream<'static, std::io::Result<bytes::Bytes>>,
        bytes::Bytes,
    >,
>;

/// Cheap to clone; all clones share the gates and the token.
#[derive(Clone)]
pub struct LichessClient {
    inner: Arc<Inner>,
}

struct Inner {
    base: String,
    token: SecretString,
    http: reqwest::Client,
    user_agent: RwLock<String>,
    gates: Vec<Gate>,
    settings: LichessSettings,
    /// Counters shared with the game tasks and the metrics endpoint (429s are counted here).
    metrics: Arc<crate::metrics::Metrics>,
}

/// How many 429 cooldowns in a row before giving up on a request.
const MAX_429: u32 = 3;

impl LichessClient {
    /// Builds the client (fails clearly if no TLS root certificates can be loaded).
    pub fn new(settings: &LichessSettings, token: SecretString) -> Result<Self, ApiError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_millis(settings.connect_timeout_ms))
            .build()
            .map_err(|e| ApiError::Unavailable {
                endpoint: Endpoint::Account,
                message: format!("cannot build the HTTP client: {}", error_chain(&e)),
                attempts: 0,
            })?;
        Ok(Self {
            inner: Arc::new(Inner {
                base: settings.url.trim_end_matches('/').to_owned(),
                token,
                http,
                user_agent: RwLock::new(format!("atomic-bot/{}", env!("CARGO_PKG_VERSION"))),
                gates: Endpoint::ALL.iter().map(|_| Gate::default()).collect(),
                settings: settings.clone(),
                metrics: crate::metrics::Metrics::new(),
            }),
        })
    }

    /// The bot's metrics (shared by every clone of this client).
    pub fn metrics(&self) -> &Arc<crate::metrics::Metrics> {
        &self.inner.metrics
    }

    /// The base URL (for PGN `Site` headers).
    pub fn base_url(&self) -> &str {
        &self.inner.base
    }

    /// Sets the identifying User-Agent once the account name is known.
    pub fn set_user(&self, username: &str) {
        if let Ok(mut ua) = self.inner.user_agent.write() {
            *ua = format!("atomic-bot/{} user:{username}", env!("CARGO_PKG_VERSION"));
        }
    }

    fn gate(&self, e: Endpoint) -> &Gate {
        &self.inner.gates[e.index()]
    }

    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.request_url(method, &format!("{}{}", self.inner.base, path))
    }

    /// A request to a whole URL (the online move sources live on other hosts), with the token
    /// and the User-Agent.
    fn request_url(&self, method: Method, url: &str) -> reqwest::RequestBuilder {
        let ua = self
            .inner
            .user_agent
            .read()
            .map_or_else(|_| "atomic-bot".into(), |u| u.clone());
        self.inner
            .http
            .request(method, url)
            .bearer_auth(self.inner.token.expose_secret())
            .header(reqwest::header::USER_AGENT, ua)
    }

    fn backoff(&self) -> impl Iterator<Item = Duration> {
        let s = &self.inner.settings;
        backon::ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(s.retry_min_ms))
            .with_max_delay(Duration::from_millis(s.retry_max_ms))
            .with_max_times(s.retry_max_times as usize)
            .with_jitter()
            .build()
    }

    /// One API call with the discipline described in the module docs; returns the body.
    async fn call(
        &self,
        endpoint: Endpoint,
        method: Method,
        path: &str,
        form: Option<&[(&str, &str)]>,
    ) -> Result<bytes::Bytes, ApiError> {
        let gate = self.gate(endpoint);
        let _single_flight = gate.lock.lock().await;
        let mut backoff = self.backoff();
        let mut attempts = 0u32;
        let mut limited = 0u32;
        loop {
            gate.wait_cooldown(endpoint).await;
            attempts += 1;
            let mut req = self
                .request(method.clone(), path)
                .timeout(Duration::from_millis(
                    self.inner.settings.request_timeout_ms,
                ));
            if let Some(form) = form {
                req = req.form(form);
            }
            let retry_reason = match req.send().await {
                Ok(resp) => {
                    let status = resp.status();
                    let body = resp.bytes().await;
                    match (status, body) {
                        (s, Ok(body)) if s.is_success() => return Ok(body),
                        (StatusCode::TOO_MANY_REQUESTS | StatusCode::BAD_REQUEST, Ok(body))
                            if bot_games_limit(&body).is_some() =>
                        {
                            let seconds = bot_games_limit(&body).flatten();
                            let ours = status == StatusCode::TOO_MANY_REQUESTS;
                            return Err(ApiError::BotGameLimit {
                                endpoint,
                                ours,
                                seconds,
                            });
                        }
                        (StatusCode::TOO_MANY_REQUESTS, _) => {
                            crate::metrics::Metrics::inc(&self.inner.metrics.rate_limited);
                            limited += 1;
                            let cooldown =
                                Duration::from_millis(self.inner.settings.rate_limit_cooldown_ms);
                            gate.start_cooldown(cooldown);
                            tracing::warn!(%endpoint, cooldown_ms = cooldown.as_millis() as u64,
                                "HTTP 429: pausing this endpoint");
                            if limited >= MAX_429 {
                                return Err(ApiError::RateLimited {
                                    endpoint,
                                    attempts: limited,
                                });
                            }
                            continue;
                        }
                        (StatusCode::UNAUTHORIZED, body) => {
                            return Err(ApiError::Unauthorized {
                                endpoint,
                                message: body.map(|b| error_text(&b)).unwrap_or_default(),
                            });
                        }
                        (s, body) if s.is_server_error() => format!(
                            "HTTP {}: {}",
                            s.as_u16(),
                            body.map(|b| error_text(&b)).unwrap_or_default()
                        ),
                        (s, Ok(body)) if !s.is_success() => {
                            return Err(ApiError::Status {
                                endpoint,
                                status: s.as_u16(),
                                message: error_text(&body),
                            });
                        }
                        (_, Err(e)) => format!("reading the response: {e}"),
                        (s, Ok(_)) => format!("unexpected HTTP {}", s.as_u16()),
                    }
                }
                Err(e) => format!("network error: {}", e.without_url()),
            };
            match backoff.next() {
                Some(delay) => {
                    tracing::warn!(%endpoint, attempt = attempts, error = %retry_reason,
                        retry_in_ms = delay.as_millis() as u64, "request failed, retrying");
                    tokio::time::sleep(delay).await;
                }
                None => {
                    return Err(ApiError::Unavailable {
                        endpoint,
                        message: retry_reason,
                        attempts,
                    });
                }
            }
        }
    }

    async fn call_json<T: serde::de::DeserializeOwned>(
        &self,
        endpoint: Endpoint,
        method: Method,
        path: &str,
        form: Option<&[(&str, &str)]>,
    ) -> Result<T, ApiError> {
        let body = self.call(endpoint, method, path, form).await?;
        serde_json::from_slice(&body).map_err(|e| ApiError::Decode {
            endpoint,
            message: e.to_string(),
        })
    }

    /// Opens an ND-JSON stream. No retries here: the caller's reconnect loop owns the backoff;
    /// a 429 starts the endpoint's cooldown, which the next opening waits out.
    async fn open_stream(&self, endpoint: Endpoint, path: &str) -> Result<BodyReader, ApiError> {
        let gate = self.gate(endpoint);
        let _single_flight = gate.lock.lock().await;
        gate.wait_cooldown(endpoint).await;
        // The stream's watchdog also guards its opening: a server that takes the connection
        // but never answers would otherwise hold the reconnect loop for the whole request
        // timeout (a day: a stream is one long request).
        let idle = self.inner.settings.stream_idle_timeout();
        let send = self
            .request(Method::GET, path)
            .header(reqwest::header::ACCEPT, "application/x-ndjson")
            .timeout(Duration::from_secs(24 * 3600))
            .send();
        let resp = match tokio::time::timeout(idle, send).await {
            Err(_) => {
                return Err(ApiError::Unavailable {
                    endpoint,
                    message: format!("no answer within {idle:?}"),
                    attempts: 1,
                });
            }
            Ok(r) => r.map_err(|e| ApiError::Unavailable {
                endpoint,
                message: format!("network error: {}", e.without_url()),
                attempts: 1,
            })?,
        };
        let status = resp.status();
        if !status.is_success() {
            let body = resp.bytes().await.unwrap_or_default();
            return Err(match status {
                StatusCode::UNAUTHORIZED => ApiError::Unauthorized {
                    endpoint,
                    message: error_text(&body),
                },
                StatusCode::TOO_MANY_REQUESTS => {
                    crate::metrics::Metrics::inc(&self.inner.metrics.rate_limited);
                    gate.start_cooldown(Duration::from_millis(
                        self.inner.settings.rate_limit_cooldown_ms,
                    ));
                    ApiError::RateLimited {
                        endpoint,
                        attempts: 1,
                    }
                }
                s if s.is_server_error() => ApiError::Unavailable {
                    endpoint,
                    message: format!("HTTP {}: {}", s.as_u16(), error_text(&body)),
                    attempts: 1,
                },
                s => ApiError::Status {
                    endpoint,
                    status: s.as_u16(),
                    message: error_text(&body),
                },
            });
        }
        let stream = resp
            .bytes_stream()
            .map_err(|e| std::io::Error::other(e.without_url()))
            .boxed();
        Ok(NdjsonReader::new(
            tokio_util::io::StreamReader::new(stream),
            self.inner.settings.stream_idle_timeout(),
        ))
    }
}

/// An error with its causes (`builder error: … No CA certificates were loaded from the
/// system`): reqwest's own message alone hides why the client could not be built.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

/// Ids and UCI moves come from the network: only safe characters go into a path.
fn seg(s: &str) -> Result<&str, ApiError> {
    if !s.is_empty()
        && s.len() <= 64
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        Ok(s)
    } else {
        Err(ApiError::BadPathSegment(
            s.chars().take(64).collect::<String>(),
        ))
    }
}

/// `Some(seconds)` when `body` is lichess's daily bot-game limit (`ratelimit.key`
/// `bot.vsBot.day`).
fn bot_games_limit(body: &[u8]) -> Option<Option<u64>> {
    let e: ErrorBody = serde_json::from_slice(body).ok()?;
    let r = e.ratelimit?;
    r.is_bot_games().then_some(r.seconds)
}

/// The `error` field of a JSON body, else a truncated text (429 pages may be HTML).
fn error_text(body: &[u8]) -> String {
    match serde_json::from_slice::<ErrorBody>(body) {
        Ok(e) if !e.error.is_empty() => e.error,
        _ => crate::lichess::ndjson::excerpt(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_path_segments_are_refused() {
        assert!(seg("abcd1234").is_ok());
        assert!(seg("e7e8q").is_ok());
        assert!(seg("../x").is_err());
        assert!(seg("a?b").is_err());
        assert!(seg("").is_err());
    }

    /// A server that takes the connection and never answers must not hold the stream's
    /// opening longer than the watchdog allows.
    #[tokio::test]
    async fn a_stream_whose_server_never_answers_fails_after_the_idle_timeout() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let mut sockets = Vec::new();
            while let Ok((s, _)) = listener.accept().await {
                sockets.push(s);
            }
        });
        let settings = LichessSettings {
            url: format!("http://{addr}"),
            stream_idle_timeout_ms: 300,
            ..LichessSettings::default()
        };
        let client = LichessClient::new(&settings, SecretString::from("lip_x")).unwrap();
        let started = std::time::Instant::now();
        let r = tokio::time::timeout(Duration::from_secs(10), client.stream_events()).await;
        held.abort();
        let err = match r {
            Ok(Err(e)) => e,
            Ok(Ok(_)) => panic!("a silent server opened a stream"),
            Err(_) => panic!("the opening was never given up"),
        };
        assert!(matches!(err, ApiError::Unavailable { .. }), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn error_text_handles_json_and_html() {
        assert_eq!(error_text(br#"{"error":"Not your turn"}"#), "Not your turn");
        assert!(error_text(b"<html>Too many requests</html>").contains("Too many"));
    }
}
