//! The server's state: everything the fake knows, under one mutex that is never held across
//! an await. The rules of what a request does live beside it, one concept per module
//! (`accounts`, `challenges`, `games`, `clock`, `streams`, with the documents in `json`);
//! each adds its part of `impl Inner`. What the state holds is typed in modules that know
//! nothing of it (`challenge_record`, `game_record`, `conn`, `log`, `lag`, `junk`), so the
//! state depends on them and never the other way round.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::FakeConfig;
use super::challenge_record::{BotLimit, ChallengeRec};
use super::conn::Conn;
use super::game_record::GameRec;
use super::junk::Junk;
use super::lag::Lags;
use super::log::RequestRecord;
use super::online_tables::OnlineTables;
use crate::lichess::client::Endpoint;

/// The server state, shared by the handlers, the layers and the in-process control methods.
pub(crate) type Shared = Arc<Mutex<Inner>>;

/// A result with lichess's error answer: `(status, error text)`.
pub(crate) type Res<T> = Result<T, (u16, String)>;

/// lichess's error answer `status` with `text`.
pub(super) fn err<T>(status: u16, text: &str) -> Res<T> {
    Err((status, text.to_owned()))
}

/// Everything the server knows: accounts, connections, challenges, games, and the test hooks
/// (queued faults, request log, lag, junk).
pub(crate) struct Inner {
    pub(crate) config: FakeConfig,
    pub(super) event_conns: HashMap<String, Conn>,
    pub(crate) event_connects: HashMap<String, usize>,
    pub(crate) silent_event_streams: usize,
    pub(super) challenges: HashMap<String, ChallengeRec>,
    pub(super) games: HashMap<String, GameRec>,
    pub(crate) game_order: Vec<String>,
    /// Answers queued by `fail_next`, by endpoint (`gate.rs`).
    pub(crate) faults: HashMap<Endpoint, VecDeque<(u16, String)>>,
    pub(crate) requests: Vec<RequestRecord>,
    pub(super) rng: u64,
    /// Lagged accounts (`lag.rs`, applied in `layers.rs`).
    pub(crate) lags: Lags,
    /// lichess's daily bot-versus-bot game limit, when simulated.
    pub(super) bot_limit: Option<BotLimit>,
    /// Junk added to every JSON document sent, when asked (`FakeLichess::junk`).
    pub(crate) junk: Option<Junk>,
    /// The online move sources' answers and delays (`online_tables.rs`).
    pub(crate) online: OnlineTables,
}

impl Inner {
    pub(crate) fn new(config: FakeConfig) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        Self {
            config,
            event_conns: HashMap::new(),
            event_connects: HashMap::new(),
            silent_event_streams: 0,
            challenges: HashMap::new(),
            games: HashMap::new(),
            game_order: Vec::new(),
            faults: HashMap::new(),
            requests: Vec::new(),
            rng: seed | 1,
            lags: Lags::default(),
            bot_limit: None,
            junk: None,
            online: OnlineTables::new(),
        }
    }

    pub(super) fn rand(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    pub(super) fn new_id(&mut self) -> String {
        const A: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        loop {
            let mut x = self.rand();
            let id: String = (0..8)
                .map(|_| {
                    let c = A[(x % A.len() as u64) as usize] as char;
                    x /= A.len() as u64;
                    c
                })
                .collect();
            if !self.games.contains_key(&id) && !self.challenges.contains_key(&id) {
                return id;
            }
        }
    }

    pub(crate) fn game_ids(&self) -> Vec<String> {
        self.game_order.clone()
    }

    pub(crate) fn running_games(&self, user: &str) -> usize {
        self.games
            .values()
            .filter(|g| !g.is_over() && g.color_of(user).is_some())
            .count()
    }
}
