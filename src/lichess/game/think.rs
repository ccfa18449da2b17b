//! Our turn: when the turn rule allows, a search (or a ponder on the opponent's time) runs on a
//! blocking thread with a stop flag and a deadline; its move is posted once, and a rejected or
//! failed post is handled here. Also each game's share of the search memory; its share of the
//! search threads is the rule in [`super::threads`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use atomic_chess::Color;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tracing::{debug, info, warn};

use super::threads::{SearchKind, SearchSlot, search_threads};
use super::{GameReport, MAX_REJECTED, RESYNC_WAIT, STUCK_GRACE, Task};
use crate::config::{Engine, Settings};
use crate::lichess::chat_commands::EvalReport;
use crate::lichess::client::ApiError;
use crate::lichess::clock::{TurnClock, budget};
use crate::lichess::correspondence;
use crate::lichess::online::{MoveSource, Played, decide};
use crate::lichess::picker::{Budget, MovePicker, Pick, Proven, SimplePicker};

pub(super) type ThinkOut = (Box<dyn MovePicker>, Option<Pick>, Duration, Played);

/// The source `!eval` names for a move the quick fallback played because the search missed its
/// deadline (the chat reads "Move from the quick fallback search (...)").
const MISSED_DEADLINE: &str = "quick fallback search (the main search missed its deadline)";

pub(super) enum Job {
    Think {
        handle: JoinHandle<ThinkOut>,
        stop: Arc<AtomicBool>,
        /// The move list this search answers.
        key: String,
        deadline: Instant,
        /// The deadline already passed once (stop flag set).
        stopped: bool,
        /// When the line that made it our turn was read.
        received: Instant,
    },
    Ponder {
        /// The ponder thread sends the picker back when it stops.
        handle: tokio::sync::oneshot::Receiver<Box<dyn MovePicker>>,
        stop: Arc<AtomicBool>,
        /// The threads it was started with (this game's share then).
        threads: usize,
        /// When to check that share again (games may have started or ended).
        recheck: Instant,
    },
}

impl Task {
    /// Starts a search or a ponder when the turn rule allows it.
    pub(super) fn act(&mut self) {
        let (Some(state), Some(game), Some(color)) = (&self.state, &self.game, self.color) else {
            return;
        };
        if state.is_terminal() || self.quitting.is_some() {
            return;
        }
        let key = state.moves.trim().to_owned();
        let our_turn = game.position().turn() == color;
        if let Some(Job::Ponder { stop, .. }) = &self.job {
            if our_turn {
                stop.store(true, Ordering::Relaxed);
            }
            return;
        }
        if self.job.is_some() {
            return;
        }
        let picker = match self.picker.take() {
            Some(p) => p,
            None => self.ctx.pickers.create(hash_share(&self.ctx.settings)),
        };
        if our_turn
            && self.post.is_none()
            && self.resync_until.is_none()
            && self.answered.as_deref() != Some(key.as_str())
        {
            let (ours, inc) = match color {
                Color::White => (state.wtime, state.winc),
                Color::Black => (state.btime, state.binc),
            };
            let turn = TurnClock {
                remaining_ms: ours,
                increment_ms: inc,
                ply: u32::try_from(game.moves().len()).unwrap_or(u32::MAX),
                first_move: game.moves().len() < 2,
                first_move_left: state.expiration.map(|e| e.left()),
                clocked: self.full.as_ref().is_some_and(|f| f.clock.is_some()),
            };
            let total = self.ctx.settings.search.effective_threads().count;
            // A correspondence game shares the threads only while it searches.
            let slot = self
                .correspondence
                .then(|| SearchSlot::take(&self.ctx.running));
            let running = self.ctx.running.load(Ordering::Relaxed);
            let mut budget = if self.correspondence {
                correspondence::move_budget(
                    &self.ctx.settings.correspondence,
                    ours,
                    search_threads(total, running, SearchKind::Think),
                )
            } else {
                budget(&self.ctx.settings.game, &turn, running, total)
            };
            // Our clock has run since the line that made it our turn was read (stopping a
            // ponder, a re-sync): that time comes out of this move's budget, not the reserve.
            let spent = self.received.elapsed();
            budget.soft = budget.soft.saturating_sub(spent);
            budget.hard = budget.hard.saturating_sub(spent);
            let stop = Arc::new(AtomicBool::new(false));
            let flag = stop.clone();
            let game = game.clone();
            let mut picker = picker;
            let online = self.online.clone();
            // The online sources first (each request within a tenth of the budget), then the
            // search on a blocking thread with what is left.
            let handle = tokio::spawn(tracing::Instrument::instrument(
                async move {
                    let _slot = slot;
                    let asked = std::time::Instant::now();
                    let advice = match &online {
                        Some(o) => o.advise(&game, &budget).await,
                        None => None,
                    };
                    let only = match (&online, &advice) {
                        (Some(o), None) => o.known_moves(&game),
                        _ => Vec::new(),
                    };
                    let spent = asked.elapsed();
                    let budget = Budget {
                        soft: budget.soft.saturating_sub(spent),
                        hard: budget.hard.saturating_sub(spent),
                        threads: budget.threads,
                    };
                    let search = tokio::task::spawn_blocking(move || {
                        lower_thread_priority();
                        let t = std::time::Instant::now();
                        let (pick, played) =
                            decide(&mut *picker, &game, &budget, &flag, advice, &only);
                        (picker, pick, t.elapsed() + spent, played)
                    });
                    match search.await {
                        Ok(out) => out,
                        // The search panicked: so does this task, and `on_thought` plays the
                        // fallback move with a fresh picker.
                        Err(e) => match e.try_into_panic() {
                            Ok(payload) => std::panic::resume_unwind(payload),
                            Err(e) => std::panic::resume_unwind(Box::new(e.to_string())),
                        },
                    }
                },
                tracing::Span::current(),
            ));
            debug!(
                soft_ms = budget.soft.as_millis() as u64,
                hard_ms = budget.hard.as_millis() as u64,
                "thinking"
            );
            self.answered = Some(key.clone());
            self.job = Some(Job::Think {
                handle,
                stop,
                key,
                deadline: Instant::now() + budget.hard + Duration::from_millis(20),
                stopped: false,
                received: self.received,
            });
        } else if !our_turn
            && !self.correspondence
            && self.ctx.settings.game.ponder
            && self.ponder_threads() > 0
            && !game.moves().is_empty()
            && self.pondered.as_deref() != Some(key.as_str())
        {
            // Once per position: a ponder that returns early (tree full, root proven) must not
            // be restarted in a loop.
            self.pondered = Some(key.clone());
            let stop = Arc::new(AtomicBool::new(false));
            let flag = stop.clone();
            let game = game.clone();
            let mut picker = picker;
            let (tx, handle) = tokio::sync::oneshot::channel();
            let threads = self.ponder_threads();
            // Its own thread at normal priority (not the reniced blocking pool): it must notice
            // `stop` at once when our turn comes, even on a loaded machine (a reniced ponder
            // thread took ~100 ms to stop there). It cannot crowd out another game's think:
            // it uses only this game's share of the threads (`super::threads`).
            let spawned = std::thread::Builder::new()
                .name("ponder".into())
                .spawn(move || {
                    picker.ponder(&game, threads, &flag);
                    let _ = tx.send(picker);
                });
            match spawned {
                Ok(_) => {
                    self.job = Some(Job::Ponder {
                        handle,
                        stop,
                        threads,
                        recheck: Instant::now() + PONDER_RECHECK,
                    });
                }
                Err(e) => warn!(error = %e, "cannot start the ponder thread"),
            }
        } else {
            self.picker = Some(picker);
        }
    }

    /// This game's share of the threads for a ponder now (0: no ponder).
    fn ponder_threads(&self) -> usize {
        search_threads(
            self.ctx.settings.search.effective_threads().count,
            self.ctx.running.load(Ordering::Relaxed),
            SearchKind::Ponder,
        )
    }

    /// A ponder may run for minutes while games start or end: when this game's share has
    /// changed since it started, it is stopped and (once its picker is back) started again
    /// with the new share, or not at all when the share is now zero. The picker keeps its
    /// table, so the restart loses little.
    pub(super) fn recheck_ponder(&mut self) {
        let share = self.ponder_threads();
        let Some(Job::Ponder {
            stop,
            threads,
            recheck,
            ..
        }) = &mut self.job
        else {
            return;
        };
        if Instant::now() < *recheck {
            return;
        }
        *recheck = Instant::now() + PONDER_RECHECK;
        if share != *threads && !stop.load(Ordering::Relaxed) {
            debug!(
                from = *threads,
                to = share,
                "games changed: restarting the ponder"
            );
            stop.store(true, Ordering::Relaxed);
            // Ponder this position again (the restart happens when the picker comes back).
            self.pondered = None;
        }
    }

    pub(super) fn on_thought(&mut self, r: Result<ThinkOut, tokio::task::JoinError>) {
        let Some(Job::Think { key, received, .. }) = self.job.take() else {
            return;
        };
        let (pick, think, played) = match r {
            Ok((picker, pick, think, played)) => {
                self.picker = Some(picker);
                (pick, think, played)
            }
            Err(e) => {
                warn!(error = %e, "the move picker failed; playing a fallback move");
                (None, Duration::ZERO, Played::SEARCH)
            }
        };
        let current = self.state.as_ref().map(|s| s.moves.trim().to_owned());
        if current.as_deref() != Some(key.as_str()) {
            // The position changed while thinking (takeback): forget this answer.
            if self.answered.as_deref() == Some(key.as_str()) {
                self.answered = None;
            }
            self.act();
            return;
        }
        let (pick, source) = match pick {
            Some(p) => (Some(p), played.source),
            None => (self.fallback_pick(), MoveSource::Fallback),
        };
        let Some(pick) = pick else {
            warn!("no legal move");
            return;
        };
        self.win_probability = pick.win_probability;
        let searched = self
            .picker
            .as_ref()
            .and_then(|p| p.last_eval())
            .filter(|_| source == MoveSource::Search);
        let eval = searched.unwrap_or_else(|| unsearched_eval(&pick, played.note));
        self.stats.record_move(think, eval.nodes);
        self.eval = Some(eval);
        if matches!(pick.proven, Some(Proven::Loss(_))) && self.ctx.settings.game.resign_proven_loss
        {
            info!("proven loss: resigning");
            self.spawn_action("resign");
            return;
        }
        self.post_move(pick, key, received, think, source);
    }

    pub(super) fn fallback_pick(&self) -> Option<Pick> {
        let game = self.game.as_ref()?;
        let budget = Budget {
            soft: Duration::ZERO,
            hard: Duration::ZERO,
            threads: 1,
        };
        SimplePicker::default().pick(game, &budget, &AtomicBool::new(false))
    }

    pub(super) fn post_move(
        &mut self,
        pick: Pick,
        key: String,
        received: Instant,
        think: Duration,
        source: MoveSource,
    ) {
        let uci = pick.mv.to_string();
        self.post_timing = Some((received, think));
        let client = self.ctx.client.clone();
        let id = self.id.clone();
        let metrics = self.ctx.metrics.clone();
        let win = pick.win_probability;
        self.post = Some((
            Box::pin(async move {
                // Measured as the request leaves: everything but the think time is overhead.
                let overhead = received.elapsed().saturating_sub(think);
                metrics.record(overhead);
                info!(mv = %uci, %source, think_ms = think.as_millis() as u64,
                    overhead_us = overhead.as_micros() as u64, win, "move");
                client.make_move(&id, &uci, None).await
            }),
            key,
        ));
    }

    pub(super) fn on_think_deadline(&mut self) {
        let Some(Job::Think {
            stop,
            deadline,
            stopped,
            ..
        }) = &mut self.job
        else {
            return;
        };
        stop.store(true, Ordering::Relaxed);
        if !*stopped {
            *stopped = true;
            *deadline += STUCK_GRACE;
            return;
        }
        // The picker ignores its stop flag: abandon it (a new one is created) and play now.
        let Some(Job::Think { key, received, .. }) = self.job.take() else {
            return;
        };
        warn!("move picker missed its deadline; playing a fallback move");
        if let Some(pick) = self.fallback_pick() {
            // `!eval` then names the move's source instead of "not searched".
            self.eval = Some(unsearched_eval(&pick, Some(MISSED_DEADLINE.to_owned())));
            self.post_move(pick, key, received, Duration::ZERO, MoveSource::Fallback);
        }
    }

    pub(super) fn on_posted(&mut self, r: Result<(), ApiError>) -> Option<GameReport> {
        let (_, key) = self.post.take()?;
        let timing = self.post_timing.take();
        match r {
            Ok(()) => {
                if let Some((received, think)) = timing {
                    self.ctx
                        .client
                        .metrics()
                        .record_move(received.elapsed(), think);
                }
            }
            Err(e @ ApiError::Unauthorized { .. }) => {
                return Some(self.leave("unauthorized", Some(e.to_string())));
            }
            Err(e) => {
                let current = self.state.as_ref().map(|s| s.moves.trim().to_owned());
                if current.as_deref() != Some(key.as_str()) {
                    debug!(error = %e, "move error after the position moved on; ignored");
                } else {
                    let ply = key.split_ascii_whitespace().count();
                    self.rejected = if self.rejected.0 == ply {
                        (ply, self.rejected.1 + 1)
                    } else {
                        (ply, 1)
                    };
                    warn!(error = %e, attempt = self.rejected.1, "move not accepted; re-syncing from the stream");
                    self.answered = None;
                    if self.rejected.1 >= MAX_REJECTED {
                        warn!("giving up on this game after repeated move rejections");
                        self.quit_game();
                        return None;
                    }
                    if e.status() == Some(400) {
                        // Reopen the stream: its gameFull is the truth. Searching the state we
                        // have now would often be wasted (the game may have moved on or
                        // ended), so wait for that gameFull, or RESYNC_WAIT at most.
                        self.reader = None;
                        self.connecting = None;
                        self.reconnect_at = Some(Instant::now());
                        self.resync_until = Some(Instant::now() + RESYNC_WAIT);
                    } else {
                        self.act();
                    }
                }
            }
        }
        self.act();
        None
    }
}

/// How often a running ponder checks that its game's share of the threads is unchanged.
const PONDER_RECHECK: Duration = Duration::from_millis(500);

/// Each game's search memory (`Hash`): `search.hash_mb` bounds all games together. The MCTS
/// copies the kept subtree into a fresh arena between moves, so one tree can briefly use twice
/// its `Hash`: each game gets half of its share. The alpha-beta table never copies, and its
/// pages are committed only as the search writes them: it gets the whole share.
pub fn hash_share(settings: &Settings) -> u64 {
    let share = settings.search.hash_mb / u64::from(settings.challenge.max_games.max(1));
    let share = match settings.search.engine {
        Engine::Mcts => share / 2,
        Engine::Alphabeta | Engine::Simple => share,
    };
    share.max(1)
}

/// What `!eval` reports for a move that no search of ours chose (a book, a tablebase, the
/// fallback): its win probability, the move as the line, and where it came from.
fn unsearched_eval(pick: &Pick, source: Option<String>) -> EvalReport {
    EvalReport {
        win_probability: Some(pick.win_probability),
        pv: vec![pick.mv.to_string()],
        source,
        ..EvalReport::default()
    }
}

/// Runs the calling (blocking-pool) thread at a lower CPU priority, once per thread, so that the
/// async runtime (reading streams, posting moves) is never queued behind the searches when
/// several games share two cores: this is what keeps the turn latency small.
fn lower_thread_priority() {
    thread_local!(static LOWERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    LOWERED.with(|done| {
        if done.replace(true) {
            return;
        }
        #[cfg(target_os = "linux")]
        // SAFETY: setpriority takes plain integers and has no memory-safety preconditions. On
        // Linux, PRIO_PROCESS with who = 0 changes only the calling thread (NPTL threads have
        // their own nice value); raising the nice value needs no privilege.
        unsafe {
            libc::setpriority(libc::PRIO_PROCESS, 0, SEARCH_NICE);
        }
    });
}

/// Nice value of search threads (the runtime stays at 0).
#[cfg(target_os = "linux")]
const SEARCH_NICE: libc::c_int = 5;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Settings;

    #[test]
    fn only_the_mcts_halves_its_share_of_the_hash() {
        let mut settings = Settings::default();
        settings.search.hash_mb = 512;
        settings.challenge.max_games = 4;
        settings.search.engine = Engine::Alphabeta;
        assert_eq!(hash_share(&settings), 128);
        settings.search.engine = Engine::Mcts;
        assert_eq!(hash_share(&settings), 64);
        settings.search.hash_mb = 1;
        assert_eq!(hash_share(&settings), 1);
    }
}
