//! Serde models of the lichess Bot API JSON (see `API.md` §3-4).
//!
//! Everything is lenient on purpose: unknown fields are ignored, unknown `type`s become
//! `Unknown`, and almost every field has a default, so that a lichess change never stops the
//! bot. The same types are serialized by the local fake server, which keeps both sides honest.

use serde::{Deserialize, Serialize};

/// One line of `/api/stream/event`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
        #[serde(default, skip_serializing_if = "Option::is_none")]
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
    #[serde(other)]
    Unknown,
}

/// `compat` of challenges and games.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct Compat {
    /// Playable through the Bot API.
    pub bot: bool,
    /// Playable through the Board API.
    pub board: bool,
}

/// `GameEventInfo` of `gameStart`/`gameFinish`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
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

/// Opponent in `GameEventInfo`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Opponent {
    /// User id (null for the lichess AI).
    pub id: Option<String>,
    /// Display name.
    pub username: String,
    /// Rating.
    pub rating: Option<i64>,
}

/// Variant key and name.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct Variant {
    /// `atomic`, `standard`, ...
    pub key: String,
    /// `Atomic`, ...
    pub name: String,
}

/// `ChallengeJson`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
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

/// A user in a challenge.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
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

/// `timeControl` of a challenge; limit and increment in seconds.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum TimeControl {
    /// Real-time clock.
    Clock {
        /// Initial seconds.
        #[serde(default)]
        limit: u32,
        /// Increment seconds.
        #[serde(default)]
        increment: u32,
    },
    /// Correspondence.
    Correspondence {
        /// Days per move.
        #[serde(default, rename = "daysPerTurn")]
        days_per_turn: u32,
    },
    /// No clock.
    Unlimited,
    /// A type we do not know.
    #[default]
    #[serde(other)]
    Unknown,
}

/// One line of `/api/bot/game/stream/{id}`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
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
        #[serde(default)]
        gone: bool,
        /// Seconds until we may claim the win.
        #[serde(default)]
        claim_win_in_seconds: Option<u64>,
    },
    /// Any other type (logged and ignored).
    #[serde(other)]
    Unknown,
}

/// `gameFull`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct GameFull {
    /// Game id.
    pub id: String,
    /// Variant.
    pub variant: Variant,
    /// Clock in milliseconds (absent for correspondence/unlimited).
    pub clock: Option<Clock>,
    /// Speed bucket.
    pub speed: String,
    /// Rated game.
    pub rated: bool,
    /// Creation time, epoch milliseconds.
    pub created_at: i64,
    /// White player.
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

/// Clock of a `gameFull`, in milliseconds.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct Clock {
    /// Initial time, ms.
    pub initial: u64,
    /// Increment, ms.
    pub increment: u64,
}

/// A player of a `gameFull`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
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

/// `gameState`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
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

/// `chatLine`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(default)]
pub struct ChatLine {
    /// `player` or `spectator`.
    pub room: String,
    /// Author.
    pub username: String,
    /// Message.
    pub text: String,
}

/// The part of `/api/account` we need.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Account {
    /// Lowercase id.
    pub id: String,
    /// Display name.
    pub username: String,
    /// `BOT` once upgraded.
    pub title: Option<String>,
    /// Ratings by perf key (`atomic`, ...); matchmaking compares opponents with ours.
    pub perfs: std::collections::HashMap<String, Perf>,
}

/// One entry of `perfs` in `/api/account`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Perf {
    /// Rating.
    pub rating: Option<i64>,
    /// Rated games played.
    pub games: Option<i64>,
}

impl Account {
    /// Whether the account is a bot account.
    pub fn is_bot(&self) -> bool {
        self.title.as_deref() == Some("BOT")
    }
}

/// An `{"error": ...}` body, when it is JSON at all.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct ErrorBody {
    /// Human text.
    pub error: String,
}

impl crate::lichess::ndjson::KnownFields for Event {
    fn known_fields(kind: &str) -> Option<&'static [&'static str]> {
        match kind {
            // `id` duplicates `game.id` on game events (kept by lichess for compatibility).
            "gameStart" | "gameFinish" => Some(&["game", "id"]),
            "challenge" => Some(&["challenge", "compat"]),
            "challengeCanceled" | "challengeDeclined" => Some(&["challenge"]),
            _ => None,
        }
    }
}

impl crate::lichess::ndjson::KnownFields for GameEvent {
    fn known_fields(kind: &str) -> Option<&'static [&'static str]> {
        match kind {
            "gameFull" => Some(&[
                "id",
                "variant",
                "clock",
                "speed",
                "perf",
                "rated",
                "createdAt",
                "white",
                "black",
                "initialFen",
                "state",
                "daysPerTurn",
                "tournamentId",
            ]),
            "gameState" => Some(&[
                "moves",
                "wtime",
                "btime",
                "winc",
                "binc",
                "status",
                "winner",
                "wdraw",
                "bdraw",
                "wtakeback",
                "btakeback",
                "expiration",
                "rematch",
            ]),
            "chatLine" => Some(&["room", "username", "text"]),
            "opponentGone" => Some(&["gone", "claimWinInSeconds"]),
            _ => None,
        }
    }
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
            r#"{"type":"gameState","moves":"e2e4","status":"started","zzz":[1]}"#,
        )
        .unwrap();
        assert!(matches!(g, GameEvent::GameState(_)));
        let c: Challenge =
            serde_json::from_str(r#"{"id":"a","timeControl":{"type":"hourglass"}}"#).unwrap();
        assert_eq!(c.time_control, TimeControl::Unknown);
    }
}
