//! The one error type of the lichess client's calls.

use super::Endpoint;

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
    /// The endpoint answered 429, or is pausing after one, and the caller does not wait (the
    /// online move sources: the search plays instead).
    #[error("{endpoint}: paused after HTTP 429 for {left_ms} ms more")]
    Paused {
        /// Where.
        endpoint: Endpoint,
        /// What is left of the pause.
        left_ms: u64,
    },
    /// No answer within the caller's time limit (the online move sources).
    #[error("{endpoint}: no answer within {limit_ms} ms")]
    TimedOut {
        /// Where.
        endpoint: Endpoint,
        /// The limit.
        limit_ms: u64,
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
