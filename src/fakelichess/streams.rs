//! The ND-JSON streams: one event stream per account (a new one closes the old; ongoing games
//! and pending challenges replayed on connect), game streams (`gameFull` first), keep-alives;
//! and the hooks of the fault injector (`faults.rs`) that cut or silence them and push lines.

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::challenge_record::ChallengeRec;
use super::conn::{Conn, Stream};
use super::state::{Inner, Res, err};

impl Inner {
    pub(crate) fn open_event_stream(&mut self, user: &str, ua: &str) -> Stream {
        *self.event_connects.entry(user.to_owned()).or_default() += 1;
        if let Some(old) = self.event_conns.remove(user) {
            old.cut.cancel();
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let cut = CancellationToken::new();
        let silent = self.silent_event_streams > 0;
        if silent {
            self.silent_event_streams -= 1;
        }
        let conn = Conn {
            user: user.to_owned(),
            ua: ua.to_owned(),
            tx,
            cut: cut.clone(),
            silent,
        };
        // Replay: ongoing games, then pending incoming challenges.
        for id in &self.game_order {
            if let Some(g) = self.games.get(id)
                && !g.is_over()
                && g.color_of(user).is_some()
            {
                conn.send(
                    &json!({"type": "gameStart", "game": self.game_info(g, user)}).to_string(),
                );
            }
        }
        let mut pending: Vec<&ChallengeRec> = self
            .challenges
            .values()
            .filter(|c| c.to == user && c.status == "created")
            .collect();
        pending.sort_by(|a, b| a.id.cmp(&b.id));
        for c in pending {
            conn.send(&self.challenge_event("challenge", &c.id).to_string());
        }
        self.event_conns.insert(user.to_owned(), conn);
        Stream { rx, cut }
    }

    pub(crate) fn open_game_stream(&mut self, user: &str, ua: &str, id: &str) -> Res<Stream> {
        let full = {
            let Some(g) = self.games.get(id) else {
                return err(404, "No such game");
            };
            if g.color_of(user).is_none() {
                return err(404, "Not your game");
            }
            self.game_full(g)
        };
        let Some(g) = self.games.get_mut(id) else {
            return err(404, "No such game");
        };
        // Same game, same user and User-Agent: the older stream is closed (like lila).
        g.subs.retain(|c| {
            let same = c.user == user && c.ua == ua;
            if same {
                c.cut.cancel();
            }
            !same
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let cut = CancellationToken::new();
        let conn = Conn {
            user: user.to_owned(),
            ua: ua.to_owned(),
            tx,
            cut: cut.clone(),
            silent: false,
        };
        conn.send(&full.to_string());
        if !g.is_over() {
            g.subs.push(conn);
        }
        Ok(Stream { rx, cut })
    }

    pub(super) fn send_event(&mut self, user: &str, v: &Value) {
        let line = v.to_string();
        if let Some(c) = self.event_conns.get(user)
            && !c.send(&line)
        {
            self.event_conns.remove(user);
        }
    }

    pub(crate) fn push_event_line(&mut self, user: &str, line: &str) {
        if let Some(c) = self.event_conns.get(user) {
            c.send(line);
        }
    }

    pub(crate) fn push_game_line(&mut self, game: &str, line: &str) {
        if let Some(g) = self.games.get_mut(game) {
            g.broadcast(line);
        }
    }

    pub(crate) fn cut_streams(&mut self) {
        for (_, c) in self.event_conns.drain() {
            c.cut.cancel();
        }
        for g in self.games.values_mut() {
            for c in g.subs.drain(..) {
                c.cut.cancel();
            }
        }
    }

    pub(crate) fn close_all(&mut self) {
        self.cut_streams();
    }
}

/// Hooks of the fault injector (`super::faults`): targeted cuts and silences of live streams,
/// and real lines with fields lichess might add one day. They act on the connections as they
/// are now; what lichess does on its own (keep-alives, replays) is left to the rest of `Inner`.
impl Inner {
    /// Cuts `user`'s event stream; whether one was open.
    pub(crate) fn cut_event_stream(&mut self, user: &str) -> bool {
        match self.event_conns.remove(user) {
            Some(c) => {
                c.cut.cancel();
                true
            }
            None => false,
        }
    }

    /// Cuts `user`'s streams of `game`; how many.
    pub(crate) fn cut_game_streams(&mut self, game: &str, user: &str) -> usize {
        let Some(g) = self.games.get_mut(game) else {
            return 0;
        };
        let before = g.subs.len();
        g.subs.retain(|c| {
            let hit = c.user == user;
            if hit {
                c.cut.cancel();
            }
            !hit
        });
        before - g.subs.len()
    }

    /// From now on `user`'s open event stream sends nothing (socket open, no keep-alive), until
    /// the client replaces it; whether one was open.
    pub(crate) fn silence_event_stream(&mut self, user: &str) -> bool {
        match self.event_conns.get_mut(user) {
            Some(c) if !c.tx.is_closed() => {
                c.silent = true;
                true
            }
            _ => false,
        }
    }

    /// The same for `user`'s streams of `game`; how many.
    pub(crate) fn silence_game_streams(&mut self, game: &str, user: &str) -> usize {
        let Some(g) = self.games.get_mut(game) else {
            return 0;
        };
        let mut n = 0;
        for c in g.subs.iter_mut().filter(|c| c.user == user) {
            c.silent = true;
            n += 1;
        }
        n
    }

    /// Whether `user` holds an open event stream that is not silenced.
    pub(crate) fn event_stream_live(&self, user: &str) -> bool {
        self.event_conns
            .get(user)
            .is_some_and(|c| !c.silent && !c.tx.is_closed())
    }

    /// Whether `user` holds an open stream of `game` (silenced or not: lichess counts a
    /// player as connected while its socket is open).
    pub(crate) fn game_stream_open(&self, game: &str, user: &str) -> bool {
        self.games
            .get(game)
            .is_some_and(|g| g.subs.iter().any(|c| c.user == user && !c.tx.is_closed()))
    }

    /// The current `gameState` of a running `game` with `extra`'s fields added, to its streams;
    /// whether the game was running.
    pub(crate) fn push_game_state_with(&mut self, game: &str, extra: &Value) -> bool {
        let Some(g) = self.games.get_mut(game).filter(|g| !g.is_over()) else {
            return false;
        };
        let mut v = g.state_json();
        merge_fields(&mut v, extra);
        g.broadcast(&v.to_string());
        true
    }

    /// `gameStart` again (as on a reconnect) for each running game of `user`, with `extra`'s
    /// fields added at the top and inside `game`; how many.
    pub(crate) fn push_game_starts_with(&mut self, user: &str, extra: &Value) -> usize {
        let mut lines = Vec::new();
        for id in &self.game_order {
            if let Some(g) = self.games.get(id)
                && !g.is_over()
                && g.color_of(user).is_some()
            {
                let mut game = self.game_info(g, user);
                merge_fields(&mut game, extra);
                let mut v = json!({"type": "gameStart", "game": game});
                merge_fields(&mut v, extra);
                lines.push(v.to_string());
            }
        }
        if let Some(c) = self.event_conns.get(user) {
            for l in &lines {
                c.send(l);
            }
        }
        lines.len()
    }
}

/// Adds the fields of the object `extra` to the object `v` (existing fields are kept).
fn merge_fields(v: &mut Value, extra: &Value) {
    if let (Some(v), Some(extra)) = (v.as_object_mut(), extra.as_object()) {
        for (k, x) in extra {
            v.entry(k.clone()).or_insert_with(|| x.clone());
        }
    }
}
