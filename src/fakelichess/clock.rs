//! Clocks and deadlines: the side to move's clock runs once both sides have moved; a game
//! without both first moves is aborted after the first-move timeout; a flag ends the game. In
//! a correspondence game the side to move has its days per turn from the last move (or the
//! start), and loses on time when they run out.
//! The server's ticker (`FakeLichess::start_on`) calls [`Inner::tick`] every `FakeConfig::tick` (25 ms).

use atomic_chess::Color;

use super::game_record::GameRec;
use super::state::Inner;

impl GameRec {
    pub(super) fn clock_running(&self) -> bool {
        self.status == "started" && self.moves.len() >= 2 && self.clock.is_some()
    }

    /// A correspondence game whose side to move's turn is running (from the start: lichess
    /// gives the first move its days too).
    pub(super) fn turn_running(&self) -> bool {
        self.status == "started" && self.days.is_some()
    }

    /// Remaining times now (the side to move's clock runs).
    pub(super) fn times(&self) -> (i64, i64) {
        let (mut w, mut b) = (self.wtime, self.btime);
        if self.clock_running() || self.turn_running() {
            let e = self.last_change.elapsed().as_millis() as i64 + self.passed_ms;
            match self.game.position().turn() {
                Color::White => w -= e,
                Color::Black => b -= e,
            }
        }
        (w.max(0), b.max(0))
    }
}

impl Inner {
    /// Keep-alives, dead connections, first-move deadlines and flags.
    pub(crate) fn tick(&mut self, keepalive: bool) {
        if keepalive {
            self.event_conns.retain(|_, c| c.send(""));
            for g in self.games.values_mut() {
                g.subs.retain(|c| c.send(""));
            }
        } else {
            self.event_conns.retain(|_, c| !c.tx.is_closed());
        }
        let first_move = self.config.first_move_timeout;
        let mut ends = Vec::new();
        for g in self.games.values() {
            if g.is_over() {
                continue;
            }
            if g.moves.len() < 2 && !g.turn_running() {
                // Like lila (`expirable` needs a clock): games without one never expire.
                if g.clock.is_some() && g.last_change.elapsed() > first_move {
                    ends.push((g.id.clone(), "aborted", None));
                }
            } else if g.clock.is_some() || g.turn_running() {
                let (w, b) = g.times();
                let turn = g.game.position().turn();
                let left = if turn == Color::White { w } else { b };
                if left <= 0 {
                    ends.push((g.id.clone(), "outoftime", Some(turn.other())));
                }
            }
        }
        for (id, status, winner) in ends {
            self.finish(&id, status, winner);
        }
    }
}
