//! Models of the lichess Bot API JSON (see `API.md` §2-4), read by the rules of
//! [`crate::lichess::lenient`]: the fields the bot needs to act are strict (a game id, the move
//! list, the status, the clocks, the players' ids, a challenge id), and reading one that is
//! missing or unreadable fails with the path of the field; every other field is lenient
//! (default when missing, null or of another type, logged at debug level), unknown fields,
//! map entries and `type`s are ignored. So a lichess change never stops the bot unless it
//! removes something the bot cannot play without, and then the log says what.

use std::collections::HashMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::lichess::lenient::{Fields, FromJson, Unreadable, deserialize_from_json, line_type};

/// One line of `/api/stream/event`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Event {
    /// A game started (also replayed for every ongoing game on connect).
    GameStart {
        /// The game.
        game: GameEventInfo,
    },
    /// A game finished (informative: the game stream's terminal state is authoritative).
    GameFinish {
        /// The game.
        game: GameEventInfo,
    },
    /// A challenge to us or by us (replayed for pending ones on connect).
    Challenge {
        /// The challenge.
        challenge: Challenge,
        /// Whether a bot could play it at all.
        #[serde(skip_serializing_if = "Option::is_none")]
        compat: Option<Compat>,
    },
    /// A challenge was withdrawn.
    ChallengeCanceled {
        /// The challenge.
        challenge: Challenge,
    },
    /// Our challenge was declined.
    ChallengeDeclined {
        /// The challenge.
        challenge: Challenge,
    },
    /// Any other event type (logged and ignored).
    Unknown,
}

impl FromJson for Event {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let kind = line_type(&v)?;
        let mut f = Fields::new("event", v)?;
        let within = |e: Unreadable| e.within(&kind);
        Ok(match kind.as_str() {
            "gameStart" => Event::GameStart {
                game: f.required("game").map_err(within)?,
            },
            "gameFinish" => Event::GameFinish {
                game: f.required("game").map_err(within)?,
            },
            "challenge" => Event::Challenge {
                challenge: f.required("challenge").map_err(within)?,
                compat: f.optional("compat"),
            },
            "challengeCanceled" => Event::ChallengeCanceled {
                challenge: f.required("challenge").map_err(within)?,
            },
            "challengeDeclined" => Event::ChallengeDeclined {
                challenge: f.required("challenge").map_err(within)?,
            },
            _ => Event::Unknown,
        })
    }
}

/// `compat` of challenges and games. Unreadable as a whole when `bot` is, so that a bad
/// `compat` reads as "not said" rather than "not playable".
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Compat {
    /// Playable through the Bot API.
    pub bot: bool,
    /// Playable through the Board API.
    pub board: bool,
}

impl FromJson for Compat {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("compat", v)?;
        Ok(Compat {
            bot: f.required("bot")?,
            board: f.lenient("board"),
        })
    }
}

/// `GameEventInfo` of `gameStart`/`gameFinish` and of `/api/account/playing`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GameEventInfo {
    /// 8-character game id.
    pub game_id: String,
    /// Same as `game_id` (older field).
    pub id: String,
    /// Our colour.
    pub color: String,
    /// Current position.
    pub fen: String,
    /// Whether we are to move.
    pub is_my_turn: bool,
    /// `friend`, `lobby`, ...
    pub source: String,
    /// Variant.
    pub variant: Variant,
    /// `bullet`, `blitz`, ...
    pub speed: String,
    /// Rated game.
    pub rated: bool,
    /// Our remaining seconds.
    pub seconds_left: Option<i64>,
    /// The opponent.
    pub opponent: Opponent,
    /// Winner colour on finish.
    pub winner: Option<String>,
    /// Our rating (lichess sends it since 2025).
    pub rating: Option<i64>,
    /// Our rating change, on `gameFinish` of a rated game.
    pub rating_diff: Option<i64>,
}

impl GameEventInfo {
    /// The game id, whichever field carries it.
    pub fn id(&self) -> &str {
        if self.game_id.is_empty() {
            &self.id
        } else {
            &self.game_id
        }
    }
}

impl FromJson for GameEventInfo {
    /// The game id is needed (`gameId`, or the older `id`); the rest is lenient.
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("game", v)?;
        let game_id: String = f.lenient("gameId");
        let id: String = f.lenient("id");
        if game_id.is_empty() && id.is_empty() {
            return Err(Unreadable::missing("gameId"));
        }
        Ok(GameEventInfo {
            game_id,
            id,
            color: f.lenient("color"),
            fen: f.lenient("fen"),
            is_my_turn: f.lenient("isMyTurn"),
            source: f.lenient("source"),
            variant: f.lenient("variant"),
            speed: f.lenient("speed"),
            rated: f.lenient("rated"),
            seconds_left: f.optional("secondsLeft"),
            opponent: f.lenient("opponent"),
            winner: f.optional("winner"),
            rating: f.optional("rating"),
            rating_diff: f.optional("ratingDiff"),
        })
    }
}

/// Opponent in `GameEventInfo`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Opponent {
    /// User id (null for the lichess AI).
    pub id: Option<String>,
    /// Display name.
    pub username: String,
    /// Rating.
    pub rating: Option<i64>,
    /// Rating change, on `gameFinish` of a rated game.
    pub rating_diff: Option<i64>,
}

impl FromJson for Opponent {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("opponent", v)?;
        Ok(Opponent {
            id: f.optional("id"),
            username: f.lenient("username"),
            rating: f.optional("rating"),
            rating_diff: f.optional("ratingDiff"),
        })
    }
}

/// Variant key and name.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Variant {
    /// `atomic`, `standard`, ...
    pub key: String,
    /// `Atomic`, ...
    pub name: String,
}

impl FromJson for Variant {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("variant", v)?;
        Ok(Variant {
            key: f.lenient("key"),
            name: f.lenient("name"),
        })
    }
}

/// `ChallengeJson`. Only the id is needed: every other field that cannot be read takes a
/// default that the challenge policy declines (no variant, an unknown time control...).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Challenge {
    /// 8 characters, also the future game id.
    pub id: String,
    /// `created`, `canceled`, ...
    pub status: String,
    /// Who challenges.
    pub challenger: Option<ChallengeUser>,
    /// Who is challenged (null for open challenges).
    pub dest_user: Option<ChallengeUser>,
    /// Variant.
    pub variant: Variant,
    /// Rated or casual.
    pub rated: bool,
    /// Speed bucket.
    pub speed: String,
    /// Clock, correspondence or unlimited.
    pub time_control: TimeControl,
    /// Colour the challenger asked for.
    pub color: String,
    /// Colour the challenger gets.
    pub final_color: Option<String>,
    /// Set for rematch offers.
    pub rematch_of: Option<String>,
    /// Set on `challengeDeclined` (lowercase key).
    pub decline_reason_key: Option<String>,
}

impl FromJson for Challenge {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("challenge", v)?;
        Ok(Challenge {
            id: f.required("id")?,
            status: f.lenient("status"),
            challenger: f.optional("challenger"),
            dest_user: f.optional("destUser"),
            variant: f.lenient("variant"),
            rated: f.lenient("rated"),
            speed: f.lenient("speed"),
            time_control: f.lenient("timeControl"),
            color: f.lenient("color"),
            final_color: f.optional("finalColor"),
            rematch_of: f.optional("rematchOf"),
            decline_reason_key: f.optional("declineReasonKey"),
        })
    }
}

/// A user in a challenge.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ChallengeUser {
    /// Lowercase id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// `BOT` for bots.
    pub title: Option<String>,
    /// Rating.
    pub rating: Option<i64>,
}

impl ChallengeUser {
    /// Whether the user is a bot account.
    pub fn is_bot(&self) -> bool {
        self.title.as_deref() == Some("BOT")
    }
}

impl FromJson for ChallengeUser {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("user", v)?;
        Ok(ChallengeUser {
            id: f.lenient("id"),
            name: f.lenient("name"),
            title: f.optional("title"),
            rating: f.optional("rating"),
        })
    }
}

/// `timeControl` of a challenge; limit and increment in seconds.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum TimeControl {
    /// Real-time clock.
    Clock {
        /// Initial seconds.
        limit: u32,
        /// Increment seconds.
        increment: u32,
    },
    /// Correspondence.
    Correspondence {
        /// Days per move.
        #[serde(rename = "daysPerTurn")]
        days_per_turn: u32,
    },
    /// No clock.
    Unlimited,
    /// A type we do not know (or could not read).
    #[default]
    Unknown,
}

impl FromJson for TimeControl {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("timeControl", v)?;
        let kind: String = f.lenient("type");
        Ok(match kind.as_str() {
            "clock" => TimeControl::Clock {
                limit: f.lenient("limit"),
                increment: f.lenient("increment"),
            },
            "correspondence" => TimeControl::Correspondence {
                days_per_turn: f.lenient("daysPerTurn"),
            },
            "unlimited" => TimeControl::Unlimited,
            _ => TimeControl::Unknown,
        })
    }
}

/// One line of `/api/bot/game/stream/{id}`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum GameEvent {
    /// Always the first line.
    GameFull(Box<GameFull>),
    /// Every move, offer, and the end.
    GameState(GameState),
    /// A chat message (ours are echoed).
    ChatLine(ChatLine),
    /// The opponent left / came back.
    #[serde(rename_all = "camelCase")]
    OpponentGone {
        /// Whether the opponent is gone.
        gone: bool,
        /// Seconds until we may claim the win.
        claim_win_in_seconds: Option<u64>,
    },
    /// Any other type (logged and ignored).
    Unknown,
}

impl FromJson for GameEvent {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let kind = line_type(&v)?;
        let within = |e: Unreadable| e.within(&kind);
        Ok(match kind.as_str() {
            "gameFull" => GameEvent::GameFull(Box::new(GameFull::from_json(v).map_err(within)?)),
            "gameState" => GameEvent::GameState(GameState::from_json(v).map_err(within)?),
            "chatLine" => GameEvent::ChatLine(ChatLine::from_json(v).map_err(within)?),
            "opponentGone" => {
                let mut f = Fields::new("opponentGone", v)?;
                GameEvent::OpponentGone {
                    gone: f.lenient("gone"),
                    claim_win_in_seconds: f.optional("claimWinInSeconds"),
                }
            }
            _ => GameEvent::Unknown,
        })
    }
}

/// `gameFull`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct GameFull {
    /// Game id.
    pub id: String,
    /// Variant (needed: only atomic games are played).
    pub variant: Variant,
    /// Clock in milliseconds (absent for correspondence/unlimited).
    pub clock: Option<Clock>,
    /// Speed bucket.
    pub speed: String,
    /// Rated game.
    pub rated: bool,
    /// Creation time, epoch milliseconds.
    pub created_at: i64,
    /// White player (needed: our colour comes from the players' ids).
    pub white: Player,
    /// Black player.
    pub black: Player,
    /// `startpos` or a FEN.
    pub initial_fen: String,
    /// The current state.
    pub state: GameState,
    /// Correspondence days per move.
    pub days_per_turn: Option<u32>,
}

impl FromJson for GameFull {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("gameFull", v)?;
        Ok(GameFull {
            id: f.lenient("id"),
            variant: f.required("variant")?,
            clock: f.optional("clock"),
            speed: f.lenient("speed"),
            rated: f.lenient("rated"),
            created_at: f.lenient("createdAt"),
            white: f.required("white")?,
            black: f.required("black")?,
            initial_fen: f.lenient("initialFen"),
            state: f.required("state")?,
            days_per_turn: f.optional("daysPerTurn"),
        })
    }
}

/// Clock of a `gameFull`, in milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Clock {
    /// Initial time, ms.
    pub initial: u64,
    /// Increment, ms.
    pub increment: u64,
}

impl FromJson for Clock {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("clock", v)?;
        Ok(Clock {
            initial: f.lenient("initial"),
            increment: f.lenient("increment"),
        })
    }
}

/// A player of a `gameFull`.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Player {
    /// Lowercase id (absent for the AI).
    pub id: Option<String>,
    /// Display name.
    pub name: Option<String>,
    /// `BOT`, `GM`, ... or null.
    pub title: Option<String>,
    /// Rating.
    pub rating: Option<i64>,
    /// Level of the lichess AI.
    pub ai_level: Option<u32>,
}

impl Player {
    /// Name to show (AI players have none).
    pub fn display(&self) -> String {
        match (&self.name, self.ai_level) {
            (Some(n), _) => n.clone(),
            (None, Some(l)) => format!("lichess AI level {l}"),
            (None, None) => self.id.clone().unwrap_or_else(|| "?".into()),
        }
    }
}

impl FromJson for Player {
    /// `id` is absent for the lichess AI, so it cannot be required; an `id` that is present
    /// but unreadable is an error (it is how the bot finds its colour).
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("player", v)?;
        let id = match f.raw("id") {
            None | Some(Value::Null) => None,
            Some(_) => Some(f.required("id")?),
        };
        Ok(Player {
            id,
            name: f.optional("name"),
            title: f.optional("title"),
            rating: f.optional("rating"),
            ai_level: f.optional("aiLevel"),
        })
    }
}

/// `gameState`.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct GameState {
    /// Space-separated UCI moves from the initial position.
    pub moves: String,
    /// White's remaining ms.
    pub wtime: i64,
    /// Black's remaining ms.
    pub btime: i64,
    /// White's increment, ms.
    pub winc: i64,
    /// Black's increment, ms.
    pub binc: i64,
    /// Status name (`started`, `mate`, ...).
    pub status: String,
    /// Winner colour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub winner: Option<String>,
    /// White offers a draw.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wdraw: bool,
    /// Black offers a draw.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bdraw: bool,
    /// White proposes a takeback.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub wtakeback: bool,
    /// Black proposes a takeback.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub btakeback: bool,
    /// The first-move deadline, while a first move is pending (lichess, Dec 2025).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration: Option<Expiration>,
    /// Id of an accepted rematch (undocumented).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rematch: Option<String>,
}

impl FromJson for GameState {
    /// The move list, the status and both clocks are needed; increments default to 0.
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("gameState", v)?;
        Ok(GameState {
            moves: f.required("moves")?,
            wtime: f.required("wtime")?,
            btime: f.required("btime")?,
            winc: f.lenient("winc"),
            binc: f.lenient("binc"),
            status: f.required("status")?,
            winner: f.optional("winner"),
            wdraw: f.lenient("wdraw"),
            bdraw: f.lenient("bdraw"),
            wtakeback: f.lenient("wtakeback"),
            btakeback: f.lenient("btakeback"),
            expiration: f.optional("expiration"),
            rematch: f.optional("rematch"),
        })
    }
}

impl GameState {
    /// Anything other than `created`/`started` is terminal (API.md §4.4).
    pub fn is_terminal(&self) -> bool {
        !matches!(self.status.as_str(), "created" | "started" | "")
    }

    /// The moves as a list (empty at the start).
    pub fn move_list(&self) -> Vec<&str> {
        self.moves.split_ascii_whitespace().collect()
    }
}

/// `gameState.expiration`: how long the side to move may still wait before its first move
/// (lichess aborts the game after `millisToMove`).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Expiration {
    /// Milliseconds since the clock of this first move started.
    pub idle_millis: u64,
    /// Milliseconds allowed for it in all.
    pub millis_to_move: u64,
}

impl Expiration {
    /// Time left before lichess aborts the game (when the message was produced).
    pub fn left(&self) -> Duration {
        Duration::from_millis(self.millis_to_move.saturating_sub(self.idle_millis))
    }
}

impl FromJson for Expiration {
    /// Both numbers or nothing: half a deadline is no deadline.
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("expiration", v)?;
        Ok(Expiration {
            idle_millis: f.required("idleMillis")?,
            millis_to_move: f.required("millisToMove")?,
        })
    }
}

/// `chatLine`.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct ChatLine {
    /// `player` or `spectator`.
    pub room: String,
    /// Author.
    pub username: String,
    /// Message.
    pub text: String,
}

impl FromJson for ChatLine {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("chatLine", v)?;
        Ok(ChatLine {
            room: f.lenient("room"),
            username: f.lenient("username"),
            text: f.lenient("text"),
        })
    }
}

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
    Event => "",
    GameEvent => "",
    Compat => "compat",
    GameEventInfo => "game",
    Opponent => "opponent",
    Variant => "variant",
    Challenge => "challenge",
    ChallengeUser => "user",
    TimeControl => "timeControl",
    GameFull => "gameFull",
    Clock => "clock",
    Player => "player",
    GameState => "gameState",
    Expiration => "expiration",
    ChatLine => "chatLine",
    Account => "account",
    Perf => "perf",
    User => "user",
    Playing => "playing",
    ErrorBody => "error",
    RateLimit => "ratelimit",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_examples() {
        let e: Event = serde_json::from_str(
            r#"{"type":"gameStart","game":{"fullId":"Kp4Rt9Zx2mQa","gameId":"Kp4Rt9Zx","id":"Kp4Rt9Zx",
 "fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","color":"black","lastMove":"",
 "source":"friend","status":{"id":20,"name":"started"},"variant":{"key":"atomic","name":"Atomic"},
 "speed":"blitz","perf":"atomic","rated":true,"hasMoved":false,
 "opponent":{"id":"boomfan","username":"BoomFan","rating":1712},"isMyTurn":false,"secondsLeft":180,
 "rating":1890,"compat":{"bot":true,"board":false}}}"#,
        )
        .unwrap();
        let Event::GameStart { game } = e else {
            panic!("not a gameStart")
        };
        assert_eq!(game.id(), "Kp4Rt9Zx");
        let e: Event = serde_json::from_str(
            r#"{"type":"challenge","challenge":{"id":"Qx7Lm2Pa","url":"https://lichess.org/Qx7Lm2Pa","status":"created",
 "challenger":{"id":"boomfan","name":"BoomFan","rating":1712,"online":true,"lag":4},
 "destUser":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890,"online":true},
 "variant":{"key":"atomic","name":"Atomic","short":"Atom"},"rated":true,"speed":"blitz",
 "timeControl":{"type":"clock","limit":180,"increment":2,"show":"3+2"},
 "color":"random","finalColor":"white","perf":{"icon":"x","name":"Atomic"}},
 "compat":{"bot":true,"board":false}}"#,
        )
        .unwrap();
        let Event::Challenge { challenge, compat } = e else {
            panic!("not a challenge")
        };
        assert_eq!(
            challenge.time_control,
            TimeControl::Clock {
                limit: 180,
                increment: 2
            }
        );
        assert!(compat.unwrap().bot);
        let g: GameEvent = serde_json::from_str(
            r#"{"type":"gameFull","id":"Kp4Rt9Zx","variant":{"key":"atomic","name":"Atomic","short":"Atom"},
 "clock":{"initial":180000,"increment":2000},"speed":"blitz","perf":{"name":"Atomic"},"rated":true,
 "createdAt":1785412800000,
 "white":{"id":"boomfan","name":"BoomFan","title":null,"rating":1712},
 "black":{"id":"ouratomicbot","name":"OurAtomicBot","title":"BOT","rating":1890},
 "initialFen":"startpos",
 "state":{"type":"gameState","moves":"","wtime":180000,"btime":180000,"winc":2000,"binc":2000,
  "status":"started","expiration":{"idleMillis":1850,"millisToMove":25000}}}"#,
        )
        .unwrap();
        assert!(matches!(g, GameEvent::GameFull(_)));
        let g: GameEvent =
            serde_json::from_str(r#"{"type":"opponentGone","gone":true,"claimWinInSeconds":12}"#)
                .unwrap();
        assert_eq!(
            g,
            GameEvent::OpponentGone {
                gone: true,
                claim_win_in_seconds: Some(12)
            }
        );
    }

    #[test]
    fn unknown_types_and_fields_are_tolerated() {
        let e: Event = serde_json::from_str(r#"{"type":"newThing","x":1}"#).unwrap();
        assert_eq!(e, Event::Unknown);
        let g: GameEvent = serde_json::from_str(
            r#"{"type":"gameState","moves":"e2e4","wtime":1,"btime":2,"status":"started","zzz":[1]}"#,
        )
        .unwrap();
        assert!(matches!(g, GameEvent::GameState(_)));
        let c: Challenge =
            serde_json::from_str(r#"{"id":"a","timeControl":{"type":"hourglass"}}"#).unwrap();
        assert_eq!(c.time_control, TimeControl::Unknown);
    }

    /// The issue's start-up failure: `perfs` entries that are not rating objects (lichess's
    /// `storm`/`racer`/`streak`, or anything else) made `/api/account` unreadable and the bot
    /// exit (`invalid type: integer, expected struct Perf`).
    #[test]
    fn an_account_with_perfs_of_other_shapes_is_read() {
        let a: Account = serde_json::from_str(
            r#"{"id":"ouratomicbot","username":"OurAtomicBot","title":"BOT",
              "perfs":{"atomic":{"games":12,"rating":1890,"rd":60,"prog":5,"prov":true},
                       "storm":{"runs":3,"score":12},"streak":7,"racer":null,"blitz":"n/a"},
              "createdAt":1785412800000,"count":{"all":12,"rated":"12"},"playTime":[1,2]}"#,
        )
        .unwrap();
        assert!(a.is_bot());
        assert_eq!(a.id, "ouratomicbot");
        assert_eq!(a.perfs["atomic"].rating, Some(1890));
        assert_eq!(a.perfs["storm"].rating, None);
        assert!(!a.perfs.contains_key("streak"));
        // Ratings themselves are optional: a `perfs` of another type leaves none.
        let a: Account = serde_json::from_str(r#"{"id":"b","title":"BOT","perfs":[1,2]}"#).unwrap();
        assert!(a.perfs.is_empty());
        assert_eq!(a.username, "b");
        // The id is needed, and its absence is named.
        let e = serde_json::from_str::<Account>(r#"{"username":"x","title":"BOT"}"#).unwrap_err();
        assert!(
            e.to_string().contains("field `account.id` is missing"),
            "{e}"
        );
    }

    /// Nulls, numbers for strings and strings for numbers are read; what the bot needs and
    /// cannot read is an error naming the field.
    #[test]
    fn needed_fields_are_strict_and_named_the_rest_bends() {
        let g: GameEvent = serde_json::from_str(
            r#"{"type":"gameState","moves":"e2e4 e7e5","wtime":"171430","btime":168910.0,
              "winc":null,"binc":"x","status":"started","wdraw":"true","winner":null}"#,
        )
        .unwrap();
        let GameEvent::GameState(s) = g else {
            panic!("{g:?}")
        };
        assert_eq!((s.wtime, s.btime, s.winc, s.binc), (171_430, 168_910, 0, 0));
        assert!(s.wdraw);
        for (line, field) in [
            (
                r#"{"type":"gameState","wtime":1,"btime":1,"status":"started"}"#,
                "gameState.moves",
            ),
            (
                r#"{"type":"gameState","moves":"","wtime":"soon","btime":1,"status":"started"}"#,
                "gameState.wtime",
            ),
            (
                r#"{"type":"gameState","moves":"","wtime":1,"btime":1,"status":null}"#,
                "gameState.status",
            ),
            (
                r#"{"type":"gameFull","variant":{"key":"atomic"},"white":{"id":"a"},"black":{"id":"b"},"state":{"moves":""}}"#,
                "gameFull.state.wtime",
            ),
            (
                r#"{"type":"gameFull","variant":{"key":"atomic"},"white":{"id":[1]},"black":{"id":"b"},"state":{}}"#,
                "gameFull.white.id",
            ),
        ] {
            let e = serde_json::from_str::<GameEvent>(line)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("`{field}`")), "{line}: {e}");
        }
        for (line, field) in [
            (
                r#"{"type":"gameStart","game":{"fullId":"x","color":"white"}}"#,
                "gameStart.game.gameId",
            ),
            (
                r#"{"type":"challenge","challenge":{"status":"created"}}"#,
                "challenge.challenge.id",
            ),
            (
                r#"{"type":"challengeDeclined","challenge":7}"#,
                "challengeDeclined.challenge",
            ),
        ] {
            let e = serde_json::from_str::<Event>(line).unwrap_err().to_string();
            assert!(e.contains(&format!("`{field}`")), "{line}: {e}");
        }
        // A challenge whose unneeded parts are unreadable still has its id, and defaults that
        // the policy declines; a bad `compat` reads as absent, not as "not playable".
        let e: Event = serde_json::from_str(
            r#"{"type":"challenge","challenge":{"id":12345678,"challenger":"boomfan",
              "variant":[],"rated":"yes","timeControl":{"type":"clock","limit":"60","increment":null}},
              "compat":{"bot":"maybe"}}"#,
        )
        .unwrap();
        let Event::Challenge { challenge, compat } = e else {
            panic!("{e:?}")
        };
        assert_eq!(challenge.id, "12345678");
        assert_eq!(challenge.challenger, None);
        assert!(!challenge.rated);
        assert_eq!(
            challenge.time_control,
            TimeControl::Clock {
                limit: 60,
                increment: 0
            }
        );
        assert_eq!(compat, None);
    }

    /// The 2025-2026 additions: `expiration`, `rating`/`ratingDiff`, `nbMyTurn`, and the
    /// daily bot-game limit's `ratelimit`.
    #[test]
    fn reads_the_recent_api_additions() {
        let g: GameEvent = serde_json::from_str(
            r#"{"type":"gameState","moves":"","wtime":180000,"btime":180000,"winc":2000,
              "binc":2000,"status":"started","expiration":{"idleMillis":1850,"millisToMove":25000}}"#,
        )
        .unwrap();
        let GameEvent::GameState(s) = g else {
            panic!("{g:?}")
        };
        let exp = s.expiration.expect("expiration");
        assert_eq!(exp.left(), Duration::from_millis(23_150));
        let e: Event = serde_json::from_str(
            r#"{"type":"gameFinish","game":{"gameId":"Kp4Rt9Zx","id":"Kp4Rt9Zx","color":"black",
              "status":{"id":60,"name":"variantEnd"},"opponent":{"id":"boomfan","username":"BoomFan",
              "rating":1712,"ratingDiff":-6},"winner":"black","rating":1890,"ratingDiff":6}}"#,
        )
        .unwrap();
        let Event::GameFinish { game } = e else {
            panic!("{e:?}")
        };
        assert_eq!((game.rating, game.rating_diff), (Some(1890), Some(6)));
        assert_eq!(game.opponent.rating_diff, Some(-6));
        let p: Playing = serde_json::from_str(
            r#"{"nowPlaying":[{"gameId":"Kp4Rt9Zx","isMyTurn":true},{"fullId":"nogameid"},42],
              "nbMyTurn":1}"#,
        )
        .unwrap();
        assert_eq!(p.now_playing.len(), 1);
        assert_eq!(p.nb_my_turn, Some(1));
        let b: ErrorBody = serde_json::from_str(
            r#"{"error":"You played 100 games against other bots today, please wait before challenging another bot.",
              "ratelimit":{"key":"bot.vsBot.day","seconds":51234}}"#,
        )
        .unwrap();
        let r = b.ratelimit.expect("ratelimit");
        assert!(r.is_bot_games());
        assert_eq!(r.seconds, Some(51_234));
    }
}
