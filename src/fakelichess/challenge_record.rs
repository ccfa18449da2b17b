//! A challenge as asked for ([`ChallengeSpec`]) and as the server keeps it until it is
//! answered ([`ChallengeRec`]), and the daily bot-game limit challenges are checked against
//! ([`BotLimit`]). What a challenge does is in `challenges.rs`.

use atomic_chess::Color;

/// A challenge to create.
#[derive(Clone, Debug)]
pub struct ChallengeSpec {
    /// Rated game.
    pub rated: bool,
    /// Clock `(limit seconds, increment seconds)`.
    pub clock: Option<(u32, u32)>,
    /// Correspondence days per move (when `clock` is `None`).
    pub days: Option<u32>,
    /// Variant key.
    pub variant: String,
    /// Colour the challenger wants: `white`, `black` or `random`.
    pub color: String,
    /// Starting position as a FEN (lichess's `fen` form field); `None` is the standard start.
    /// Games from a FEN may have Black to move first.
    pub fen: Option<String>,
}

impl Default for ChallengeSpec {
    fn default() -> Self {
        Self {
            rated: false,
            clock: Some((60, 1)),
            days: None,
            variant: "atomic".into(),
            color: "random".into(),
            fen: None,
        }
    }
}

/// A challenge as the server keeps it (its id is also the id of the game it becomes).
pub(super) struct ChallengeRec {
    pub(super) id: String,
    pub(super) from: String,
    pub(super) to: String,
    pub(super) spec: ChallengeSpec,
    pub(super) status: String,
    pub(super) decline_key: Option<String>,
    /// The challenger's colour.
    pub(super) challenger_color: Color,
}

/// The daily limit of bot-versus-bot games (lichess: 100 a day per bot, counted at game start
/// for both bots).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BotLimit {
    /// Games a bot may start against bots.
    pub(crate) per_day: usize,
    /// `ratelimit.seconds` answered (time until the reset).
    pub(crate) reset_s: u64,
}
