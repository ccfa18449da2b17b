//! The account and users (`/api/account`, `/api/account/playing`, `/api/bot/online`) and
//! lichess's error bodies with their rate limits.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::event::GameEventInfo;
use crate::lichess::lenient::{Fields, FromJson, Unreadable, deserialize_from_json};

/// The part of `/api/account` we need.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Account {
    /// Lowercase id.
    pub id: String,
    /// Display name.
    pub username: String,
    /// `BOT` once upgraded.
    pub title: Option<String>,
    /// Ratings by perf key (`atomic`, ...); matchmaking compares opponents with ours.
    pub perfs: HashMap<String, Perf>,
}

impl FromJson for Account {
    /// The id is needed (the bot finds its colour by it); the title decides whether the Bot
    /// API can be used at all, so an unreadable one reads as "not a bot". Ratings are optional:
    /// a `perfs` that cannot be read is a warning, and its entries of other shapes (`storm`:
    /// `{runs, score}`) or types are skipped.
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("account", v)?.warn_on_fallback();
        let id: String = f.required("id")?;
        let atomic_sent = f
            .raw("perfs")
            .and_then(|p| p.get("atomic"))
            .is_some_and(|a| !a.is_null());
        let perfs: HashMap<String, Perf> = f.lenient("perfs");
        if atomic_sent && !perfs.contains_key("atomic") {
            tracing::warn!(
                "account: field `perfs.atomic` unreadable; the atomic rating is unknown"
            );
        }
        Ok(Account {
            username: f.optional("username").unwrap_or_else(|| id.clone()),
            id,
            title: f.optional("title"),
            perfs,
        })
    }
}

/// One entry of `perfs` in `/api/account` and user objects. Entries that are not objects are
/// unreadable (and dropped from the map); objects of another shape read as "no rating".
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Perf {
    /// Rating.
    pub rating: Option<i64>,
    /// Rated games played.
    pub games: Option<i64>,
}

impl FromJson for Perf {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("perf", v)?;
        Ok(Perf {
            rating: f.optional("rating"),
            games: f.optional("games"),
        })
    }
}

impl Account {
    /// Whether the account is a bot account.
    pub fn is_bot(&self) -> bool {
        self.title.as_deref() == Some("BOT")
    }
}

/// A user of `/api/bot/online` (one ND-JSON line each).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// Lowercase id.
    pub id: String,
    /// Display name (the challenge URL uses it).
    pub username: String,
    /// `BOT` for bots.
    pub title: Option<String>,
    /// Ratings by perf key.
    pub perfs: HashMap<String, Perf>,
    /// Closed account.
    pub disabled: bool,
    /// Flagged for a terms-of-service violation.
    pub tos_violation: bool,
}

impl FromJson for User {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("user", v)?;
        let id: String = f.required("id")?;
        Ok(User {
            username: f.optional("username").unwrap_or_else(|| id.clone()),
            id,
            title: f.optional("title"),
            perfs: f.lenient("perfs"),
            disabled: f.lenient("disabled"),
            tos_violation: f.lenient("tosViolation"),
        })
    }
}

/// `/api/account/playing`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Playing {
    /// Ongoing games, most urgent first (entries without a game id are dropped).
    pub now_playing: Vec<GameEventInfo>,
    /// How many of them wait for our move (lichess, 2025).
    pub nb_my_turn: Option<u32>,
}

impl FromJson for Playing {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("playing", v)?;
        Ok(Playing {
            now_playing: f.required("nowPlaying")?,
            nb_my_turn: f.optional("nbMyTurn"),
        })
    }
}

/// An `{"error": ...}` body, when it is JSON at all, with lichess's machine-readable
/// `ratelimit` when a limit was hit.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ErrorBody {
    /// Human text.
    pub error: String,
    /// Which limit, and for how long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratelimit: Option<RateLimit>,
}

impl FromJson for ErrorBody {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("error", v)?;
        Ok(ErrorBody {
            error: f.lenient("error"),
            ratelimit: f.optional("ratelimit"),
        })
    }
}

/// `ratelimit` of an error body: `{"key": "bot.vsBot.day", "seconds": 51234}`.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct RateLimit {
    /// The limiter (`bot.vsBot.day`: the daily bot-versus-bot games).
    pub key: String,
    /// Seconds until it resets.
    pub seconds: Option<u64>,
}

/// lichess's key of the daily limit of bot-versus-bot games.
pub const BOT_GAMES_LIMIT_KEY: &str = "bot.vsBot.day";

impl RateLimit {
    /// Whether this is the daily bot-versus-bot game limit.
    pub fn is_bot_games(&self) -> bool {
        self.key == BOT_GAMES_LIMIT_KEY
    }
}

impl FromJson for RateLimit {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("ratelimit", v)?;
        Ok(RateLimit {
            key: f.lenient("key"),
            seconds: f.optional("seconds"),
        })
    }
}

deserialize_from_json! {
    Account => "account",
    Perf => "perf",
    User => "user",
    Playing => "playing",
    ErrorBody => "error",
    RateLimit => "ratelimit",
}
