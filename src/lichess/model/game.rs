//! The game stream (`/api/bot/game/stream/{id}`): the full game, its states, clocks,
//! players and chat lines.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::event::Variant;
use crate::lichess::lenient::{Fields, FromJson, Unreadable, deserialize_from_json, line_type};

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

deserialize_from_json! {
    GameEvent => "",
    GameFull => "gameFull",
    Clock => "clock",
    Player => "player",
    GameState => "gameState",
    Expiration => "expiration",
    ChatLine => "chatLine",
}
