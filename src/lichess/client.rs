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

use std::sync::{Arc, Mutex as StdMutex, RwLock};
use std::time::Duration;

use backon::BackoffBuilder;
use futures_util::{StreamExt, TryStreamExt};
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use tokio::time::Instant;

use crate::config::LichessSettings;
use crate::lichess::model::{Account, Challenge, ErrorBody, Playing};
use crate::lichess::ndjson::NdjsonReader;

/// Kinds of endpoints; each has its own single-flight lock and 429 cooldown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `GET /api/account`.
    Account,
    /// `POST /api/bot/account/upgrade`.
    Upgrade,
    /// `GET /api/stream/event` (opening only).
    EventStream,
    /// `GET /api/bot/game/stream/{id}` (opening only).
    GameStream,
    /// `POST /api/bot/game/{id}/move/{uci}`.
    Move,
    /// `POST /api/bot/game/{id}/chat`.
    Chat,
    /// `POST .../abort`.
    Abort,
    /// `POST .../resign`.
    Resign,
    /// `POST .../draw/{yes|no}`.
    Draw,
    /// `POST .../takeback/{yes|no}`.
    Takeback,
    /// `POST .../claim-victory`.
    ClaimVictory,
    /// `POST .../claim-draw`.
    ClaimDraw,
    /// `POST /api/challenge/{id}/accept`.
    Accept,
    /// `POST /api/challenge/{id}/decline`.
    Decline,
    /// `POST /api/challenge/{username}`.
    CreateChallenge,
    /// `GET /api/account/playing`.
    Playing,
    /// `GET /api/bot/online` (matchmaking).
    OnlineBots,
    /// `POST /api/challenge/{id}/cancel` (matchmaking).
    CancelChallenge,
}

impl Endpoint {
    const ALL: [Endpoint; 18] = [
        Endpoint::Account,
        Endpoint::Upgrade,
        Endpoint::EventStream,
        Endpoint::GameStream,
        Endpoint::Move,
        Endpoint::Chat,
        Endpoint::Abort,
        Endpoint::Resign,
        Endpoint::Draw,
        Endpoint::Takeback,
        Endpoint::ClaimVictory,
        Endpoint::ClaimDraw,
        Endpoint::Accept,
        Endpoint::Decline,
        Endpoint::CreateChallenge,
        Endpoint::Playing,
        Endpoint::OnlineBots,
        Endpoint::CancelChallenge,
    ];

    fn index(self) -> usize {
        Self::ALL.iter().position(|&e| e == self).unwrap_or(0)
    }

    /// Name for logs.
    pub fn name(self) -> &'static str {
        match self {
            Endpoint::Account => "account",
            Endpoint::Upgrade => "upgrade",
            Endpoint::EventStream => "event stream",
            Endpoint::GameStream => "game stream",
            Endpoint::Move => "move",
            Endpoint::Chat => "chat",
            Endpoint::Abort => "abort",
            Endpoint::Resign => "resign",
            Endpoint::Draw => "draw",
            Endpoint::Takeback => "takeback",
            Endpoint::ClaimVictory => "claim-victory",
            Endpoint::ClaimDraw => "claim-draw",
            Endpoint::Accept => "accept",
            Endpoint::Decline => "decline",
            Endpoint::CreateChallenge => "create challenge",
            Endpoint::Playing => "playing",
            Endpoint::OnlineBots => "online bots",
            Endpoint::CancelChallenge => "cancel challenge",
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed API call. Never contains the token.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 401: the token is wrong, revoked or expired. The bot stops.
    #[error(
        "{endpoint}: lichess rejected the token (HTTP 401: {message}); check LICHESS_BOT_TOKEN \
         or lichess.token_file"
    )]
    Unauthorized {
        /// Where.
        endpoint: Endpoint,
        /// Server text.
        message: String,
    },
    /// 429 again after waiting the cooldown several times.
    #[error("{endpoint}: still rate limited (HTTP 429) after {attempts} cooldowns")]
    RateLimited {
        /// Where.
        endpoint: Endpoint,
        /// How many 429s in a row.
        attempts: u32,
    },
    /// Another HTTP error (400 illegal move, 404 no such game, 403 missing scope...).
    #[error("{endpoint}: HTTP {status}: {message}")]
    Status {
        /// Where.
        endpoint: Endpoint,
        /// HTTP status.
        status: u16,
        /// Server text (`error` field, or a truncated body).
        message: String,
    },
    /// Network failure or 5xx after all retries.
    #[error("{endpoint}: {message} (after {attempts} attempts)")]
    Unavailable {
        /// Where.
        endpoint: Endpoint,
        /// Last error.
        message: String,
        /// Attempts made.
        attempts: u32,
    },
    /// lichess's daily limit of bot-versus-bot games (`ratelimit.key` `bot.vsBot.day`):
    /// HTTP 429 when it is ours, 400 when it is the opponent's. Never retried, and it does
    /// not pause the endpoint: games against humans are not limited.
    #[error("{endpoint}: {} daily bot-game limit reached (HTTP {}){}",
        if *.ours { "our" } else { "the opponent's" },
        if *.ours { 429 } else { 400 },
        .seconds.map(|s| format!(", resets in {s} s")).unwrap_or_default())]
    BotGameLimit {
        /// Where.
        endpoint: Endpoint,
        /// Our limit (429) or the opponent's (400).
        ours: bool,
        /// `ratelimit.seconds`: until it resets.
        seconds: Option<u64>,
    },
    /// A 2xx body that is not what the API documents.
    #[error("{endpoint}: unexpected response: {message}")]
    Decode {
        /// Where.
        endpoint: Endpoint,
        /// Parser message.
        message: String,
    },
    /// An id or move from the network that is unsafe to put into a URL path.
    #[error("refusing to use {0:?} in a request path")]
    BadPathSegment(String),
}

impl ApiError {
    /// HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Unauthorized { .. } => Some(401),
            ApiError::RateLimited { .. } => Some(429),
            ApiError::Status { status, .. } => Some(*status),
            ApiError::BotGameLimit { ours, .. } => Some(if *ours { 429 } else { 400 }),
            _ => None,
        }
    }
}

/// Per-endpoint state: the single-flight lock and the 429 cooldown.
#[derive(Default)]
struct Gate {
    lock: tokio::sync::Mutex<()>,
    cooldown_until: StdMutex<Option<Instant>>,
}

impl Gate {
    async fn wait_cooldown(&self, endpoint: Endpoint) {
        let until = self.cooldown_until.lock().map(|g| *g).unwrap_or(None);
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
        let ua = self
            .inner
            .user_agent
            .read()
            .map(|u| u.clone())
            .unwrap_or_else(|_| "atomic-bot".into());
        self.inner
            .http
            .request(method, format!("{}{}", self.inner.base, path))
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

    /// `GET /api/account`.
    pub async fn account(&self) -> Result<Account, ApiError> {
        self.call_json(Endpoint::Account, Method::GET, "/api/account", None)
            .await
    }

    /// `POST /api/bot/account/upgrade` (irreversible).
    pub async fn upgrade(&self) -> Result<(), ApiError> {
        self.call(
            Endpoint::Upgrade,
            Method::POST,
            "/api/bot/account/upgrade",
            None,
        )
        .await
        .map(drop)
    }

    /// `GET /api/account/playing?nb=50`: the ongoing games and `nbMyTurn`.
    pub async fn playing(&self) -> Result<Playing, ApiError> {
        self.call_json(
            Endpoint::Playing,
            Method::GET,
            "/api/account/playing?nb=50",
            None,
        )
        .await
    }

    /// Opens `/api/stream/event`.
    pub async fn stream_events(&self) -> Result<BodyReader, ApiError> {
        self.open_stream(Endpoint::EventStream, "/api/stream/event")
            .await
    }

    /// Opens `/api/bot/game/stream/{id}`.
    pub async fn stream_game(&self, game_id: &str) -> Result<BodyReader, ApiError> {
        let id = seg(game_id)?;
        self.open_stream(Endpoint::GameStream, &format!("/api/bot/game/stream/{id}"))
            .await
    }

    /// `POST /api/bot/game/{id}/move/{uci}`, optionally offering/accepting (`true`) or
    /// declining (`false`) a draw with it.
    pub async fn make_move(
        &self,
        game_id: &str,
        uci: &str,
        offering_draw: Option<bool>,
    ) -> Result<(), ApiError> {
        let mut path = format!("/api/bot/game/{}/move/{}", seg(game_id)?, seg(uci)?);
        if let Some(d) = offering_draw {
            path.push_str(if d {
                "?offeringDraw=true"
            } else {
                "?offeringDraw=false"
            });
        }
        self.call(Endpoint::Move, Method::POST, &path, None)
            .await
            .map(drop)
    }

    /// `POST /api/bot/game/{id}/chat` in the given room.
    pub async fn chat(&self, game_id: &str, room: &str, text: &str) -> Result<(), ApiError> {
        let path = format!("/api/bot/game/{}/chat", seg(game_id)?);
        self.call(
            Endpoint::Chat,
            Method::POST,
            &path,
            Some(&[("room", room), ("text", text)]),
        )
        .await
        .map(drop)
    }

    async fn game_action(
        &self,
        endpoint: Endpoint,
        game_id: &str,
        action: &str,
    ) -> Result<(), ApiError> {
        let path = format!("/api/bot/game/{}/{action}", seg(game_id)?);
        self.call(endpoint, Method::POST, &path, None)
            .await
            .map(drop)
    }

    /// `POST .../abort`.
    pub async fn abort(&self, game_id: &str) -> Result<(), ApiError> {
        self.game_action(Endpoint::Abort, game_id, "abort").await
    }

    /// `POST .../resign`.
    pub async fn resign(&self, game_id: &str) -> Result<(), ApiError> {
        self.game_action(Endpoint::Resign, game_id, "resign").await
    }

    /// `POST .../draw/{yes|no}`: offer/accept or decline a draw.
    pub async fn draw(&self, game_id: &str, accept: bool) -> Result<(), ApiError> {
        let a = if accept { "draw/yes" } else { "draw/no" };
        self.game_action(Endpoint::Draw, game_id, a).await
    }

    /// `POST .../takeback/{yes|no}`.
    pub async fn takeback(&self, game_id: &str, accept: bool) -> Result<(), ApiError> {
        let a = if accept {
            "takeback/yes"
        } else {
            "takeback/no"
        };
        self.game_action(Endpoint::Takeback, game_id, a).await
    }

    /// `POST .../claim-victory`.
    pub async fn claim_victory(&self, game_id: &str) -> Result<(), ApiError> {
        self.game_action(Endpoint::ClaimVictory, game_id, "claim-victory")
            .await
    }

    /// `POST .../claim-draw`: ends the game as a draw once the opponent has left (the
    /// `opponentGone` countdown ran out); lichess answers 400 otherwise.
    pub async fn claim_draw(&self, game_id: &str) -> Result<(), ApiError> {
        self.game_action(Endpoint::ClaimDraw, game_id, "claim-draw")
            .await
    }

    /// `POST /api/challenge/{id}/accept`. The daily bot-game limit comes back as
    /// [`ApiError::BotGameLimit`] at once.
    pub async fn accept_challenge(&self, id: &str) -> Result<(), ApiError> {
        let path = format!("/api/challenge/{}/accept", seg(id)?);
        self.call(Endpoint::Accept, Method::POST, &path, None)
            .await
            .map(drop)
    }

    /// `POST /api/challenge/{id}/decline` with a reason key.
    pub async fn decline_challenge(&self, id: &str, reason: &str) -> Result<(), ApiError> {
        let path = format!("/api/challenge/{}/decline", seg(id)?);
        self.call(
            Endpoint::Decline,
            Method::POST,
            &path,
            Some(&[("reason", reason)]),
        )
        .await
        .map(drop)
    }

    /// `POST /api/challenge/{username}` (the demo opponent uses it).
    pub async fn create_challenge(
        &self,
        username: &str,
        form: &[(&str, &str)],
    ) -> Result<Challenge, ApiError> {
        let path = format!("/api/challenge/{}", seg(username)?);
        let c: CreatedChallenge = self
            .call_json(Endpoint::CreateChallenge, Method::POST, &path, Some(form))
            .await?;
        Ok(c.into_challenge())
    }
}

/// The answer to `POST /api/challenge/{username}`: lichess wraps the challenge in
/// `{"challenge": ...}`, older servers answered with it bare; both are accepted.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum CreatedChallenge {
    Wrapped { challenge: Challenge },
    Plain(Challenge),
}

impl CreatedChallenge {
    fn into_challenge(self) -> Challenge {
        match self {
            CreatedChallenge::Wrapped { challenge } | CreatedChallenge::Plain(challenge) => {
                challenge
            }
        }
    }
}

/// What lichess answered to one attempt at creating a challenge
/// ([`LichessClient::create_challenge_once`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CreateAnswer {
    /// 2xx: the challenge id (= the future game id).
    Created(String),
    /// Any other status, with the body (JSON, HTML or empty) for the caller to read: matchmaking
    /// classifies it (`lichess::matchmaking::classify_challenge_error`).
    Refused {
        /// HTTP status.
        status: u16,
        /// The body as text.
        body: String,
    },
}

/// Matchmaking's calls (`lichess::matchmaking::api`). Creating a challenge is a single attempt
/// that hands the status and body back: matchmaking must see lichess's `ratelimit` (daily
/// bot-game limit) instead of having the request retried after a 60 s cooldown.
impl LichessClient {
    /// `GET /api/bot/online?nb=…`: the ND-JSON body, one user a line.
    pub async fn online_bots(&self, nb: u32) -> Result<String, ApiError> {
        let path = format!("/api/bot/online?nb={nb}");
        let body = self
            .call(Endpoint::OnlineBots, Method::GET, &path, None)
            .await?;
        Ok(String::from_utf8_lossy(&body).into_owned())
    }

    /// `POST /api/challenge/{username}` once, without retries. A 429 other than the daily
    /// bot-game limit still starts the endpoint's cooldown (and is counted).
    pub async fn create_challenge_once(
        &self,
        username: &str,
        form: &[(&str, &str)],
    ) -> Result<CreateAnswer, ApiError> {
        let endpoint = Endpoint::CreateChallenge;
        let path = format!("/api/challenge/{}", seg(username)?);
        let gate = self.gate(endpoint);
        let _single_flight = gate.lock.lock().await;
        gate.wait_cooldown(endpoint).await;
        let resp = self
            .request(Method::POST, &path)
            .timeout(Duration::from_millis(
                self.inner.settings.request_timeout_ms,
            ))
            .form(form)
            .send()
            .await
            .map_err(|e| ApiError::Unavailable {
                endpoint,
                message: format!("network error: {}", e.without_url()),
                attempts: 1,
            })?;
        let status = resp.status();
        let body = resp.bytes().await.unwrap_or_default();
        if status.is_success() {
            return serde_json::from_slice::<CreatedChallenge>(&body)
                .map(|c| CreateAnswer::Created(c.into_challenge().id))
                .map_err(|e| ApiError::Decode {
                    endpoint,
                    message: e.to_string(),
                });
        }
        // The daily bot-game limit pauses matchmaking, not the endpoint.
        if status == StatusCode::TOO_MANY_REQUESTS && bot_games_limit(&body).is_none() {
            crate::metrics::Metrics::inc(&self.inner.metrics.rate_limited);
            gate.start_cooldown(Duration::from_millis(
                self.inner.settings.rate_limit_cooldown_ms,
            ));
        }
        Ok(CreateAnswer::Refused {
            status: status.as_u16(),
            body: String::from_utf8_lossy(&body).into_owned(),
        })
    }

    /// `POST /api/challenge/{id}/cancel`.
    pub async fn cancel_challenge(&self, id: &str) -> Result<(), ApiError> {
        let path = format!("/api/challenge/{}/cancel", seg(id)?);
        self.call(Endpoint::CancelChallenge, Method::POST, &path, None)
            .await
            .map(drop)
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
