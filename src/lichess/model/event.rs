//! The event stream (`/api/stream/event`): its lines, the games they announce and the
//! challenges they carry.

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

deserialize_from_json! {
    Event => "",
    Compat => "compat",
    GameEventInfo => "game",
    Opponent => "opponent",
    Variant => "variant",
    Challenge => "challenge",
    ChallengeUser => "user",
    TimeControl => "timeControl",
}
