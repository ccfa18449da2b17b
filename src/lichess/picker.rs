//! The adapter between a game task and whatever chooses moves.
//!
//! The game task only knows [`MovePicker`]: given the game, a time budget and a stop flag, it
//! returns a move, a win probability (for draw offers) and whether the result is proven (for
//! resigning). It is called on a blocking thread (`spawn_blocking`) with a deadline, so a
//! slow or stuck picker can never make the bot lose on time or block the runtime.
//!
//! Two implementations:
//! - [`SearcherPicker`] wraps the MCTS [`Searcher`] (`pick` = a search with the budget's soft
//!   and hard limits; `ponder` = an infinite search until stopped, which grows the tree the
//!   next search reuses; `new_game` = clear). This is what `atomic-bot lichess` plays with.
//! - [`SimplePicker`], instant and rule-based: it wins at once when it can, avoids moves that
//!   let the opponent blow up our king next move, and prefers captures that destroy the most
//!   material. The demo opponent and the tests use it; the game task also uses it as the
//!   fallback when a picker misses its deadline.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use atomic_chess::{Color, Game, Move, Role};

use crate::search::{self, Limits, SearchConfig, Searcher};

/// Time allowed for one move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Stop here if the result is stable.
    pub soft: Duration,
    /// Never think longer than this.
    pub hard: Duration,
    /// Threads this search may use (the total is shared by the running games).
    pub threads: usize,
}

/// A proven game result from the side to move's view: the search's own.
pub use crate::search::Proven;

/// The answer of a picker.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pick {
    /// The move to play (legal in the game's position).
    pub mv: Move,
    /// Our win probability, 0..1 (draws accepted when low).
    pub win_probability: f32,
    /// Set when the search proved the result.
    pub proven: Option<Proven>,
}

/// Chooses moves. One instance per game (it may keep a tree between moves).
pub trait MovePicker: Send + 'static {
    /// Picks a move; `None` only if there is no legal move. Must return promptly once
    /// `stop` is set.
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick>;

    /// Picks a move among `only` (empty, or none of them legal: among every legal move). The
    /// default is [`MovePicker::pick`], for pickers that cannot narrow their choice.
    fn pick_among(
        &mut self,
        game: &Game,
        budget: &Budget,
        stop: &AtomicBool,
        _only: &[Move],
    ) -> Option<Pick> {
        self.pick(game, budget, stop)
    }

    /// Thinks on the opponent's time with `threads` threads until `stop` is set (default:
    /// nothing).
    fn ponder(&mut self, _game: &Game, _threads: usize, _stop: &AtomicBool) {}

    /// A new game starts with this picker (clear any tree).
    fn new_game(&mut self) {}

    /// Details of the last `pick` for `!eval` and the per-game summary (score, principal
    /// variation, nodes, depth); `None` if the picker has none (the game task then reports the
    /// win probability and the move).
    fn last_eval(&self) -> Option<crate::lichess::chat_commands::EvalReport> {
        None
    }
}

/// Creates a picker per game.
pub trait PickerFactory: Send + Sync + 'static {
    /// `hash_mb`: this game's share of `search.hash_mb`.
    fn create(&self, hash_mb: u64) -> Box<dyn MovePicker>;
}

/// A fast rule-based picker (see the module docs). `seed` varies the choice among equals so
/// that two `SimplePicker`s do not always play the same game.
#[derive(Clone, Debug, Default)]
pub struct SimplePicker {
    /// Tie-break seed.
    pub seed: u64,
}

/// Factory of [`SimplePicker`]s with distinct seeds.
#[derive(Debug, Default)]
pub struct SimplePickerFactory {
    next: std::sync::atomic::AtomicU64,
}

impl PickerFactory for SimplePickerFactory {
    fn create(&self, _hash_mb: u64) -> Box<dyn MovePicker> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        Box::new(SimplePicker {
            seed: n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED,
        })
    }
}

fn value(role: Role) -> i32 {
    match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 0,
    }
}

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl SimplePicker {
    /// Score of a move for the side to move (higher is better).
    fn score(&self, game: &Game, m: Move, us: Color) -> i32 {
        let pos = game.position();
        let (ours, theirs) = pos.king_explodes(m);
        if theirs && !ours {
            return 100_000;
        }
        let mut score = 0;
        if m.is_capture() {
            for sq in pos.blast_squares(m) {
                if let Some(p) = pos.board().piece_at(sq) {
                    let v = value(p.role) * 10;
                    score += if p.color == us { -v } else { v };
                }
            }
        }
        if let Some(r) = m.promotion() {
            score += value(r) * 10;
        }
        let Ok(next) = pos.play(m) else {
            return i32::MIN;
        };
        // One-ply safety: a reply that blows up our king loses at once.
        for reply in next.legal_moves() {
            let (their_king, our_king) = next.king_explodes(reply);
            if our_king && !their_king {
                return score - 50_000;
            }
        }
        score
    }
}

impl MovePicker for SimplePicker {
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick> {
        self.pick_among(game, budget, stop, &[])
    }

    fn pick_among(
        &mut self,
        game: &Game,
        _budget: &Budget,
        stop: &AtomicBool,
        only: &[Move],
    ) -> Option<Pick> {
        let pos = game.position();
        let us = pos.turn();
        let moves = search::restrict_root(&pos.legal_moves(), only);
        let first = *moves.first()?;
        let salt = mix(self.seed ^ pos.zobrist());
        let mut best = (i32::MIN, 0u64, first);
        for (i, &m) in moves.iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let s = self.score(game, m, us);
            let tie = mix(salt.wrapping_add(i as u64));
            if (s, tie) > (best.0, best.1) {
                best = (s, tie, m);
            }
        }
        let (score, _, mv) = best;
        let (win_probability, proven) = if score >= 100_000 {
            (1.0, Some(Proven::Win(1)))
        } else if score <= -50_000 + 200 {
            (0.05, None)
        } else {
            (0.5 + (score as f32 / 400.0).clamp(-0.4, 0.4), None)
        };
        Some(Pick {
            mv,
            win_probability,
            proven,
        })
    }
}

/// The MCTS search as a [`MovePicker`].
pub struct SearcherPicker {
    searcher: Searcher,
    /// The last search's score, line and size, for `!eval` and the game summary.
    last: Option<crate::lichess::chat_commands::EvalReport>,
}

impl SearcherPicker {
    /// A picker with its own tree.
    pub fn new(config: SearchConfig) -> Self {
        Self {
            searcher: Searcher::new(config),
            last: None,
        }
    }
}

impl SearcherPicker {
    /// Sets the search's thread count (this game's share) when it changed.
    fn use_threads(&mut self, threads: usize) {
        let threads = threads.max(1);
        if self.searcher.config().threads != threads {
            let mut config = self.searcher.config().clone();
            config.threads = threads;
            self.searcher.set_config(config);
        }
    }
}

impl MovePicker for SearcherPicker {
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick> {
        self.pick_among(game, budget, stop, &[])
    }

    fn pick_among(
        &mut self,
        game: &Game,
        budget: &Budget,
        stop: &AtomicBool,
        only: &[Move],
    ) -> Option<Pick> {
        self.use_threads(budget.threads);
        // A zero budget still needs a move: give the search a millisecond.
        let floor = Duration::from_millis(1);
        let limits = Limits {
            soft: Some(budget.soft.max(floor)),
            hard: Some(budget.hard.max(floor)),
            searchmoves: only.to_vec(),
            ..Limits::default()
        };
        let result = self.searcher.search(game, &limits, stop, &mut |_| {});
        self.last = Some(eval_report(&result));
        Some(Pick {
            mv: result.best_move?,
            win_probability: result.win_probability,
            proven: result.proven,
        })
    }

    fn ponder(&mut self, game: &Game, threads: usize, stop: &AtomicBool) {
        self.use_threads(threads);
        let limits = Limits {
            infinite: true,
            ..Limits::default()
        };
        self.searcher.search(game, &limits, stop, &mut |_| {});
    }

    fn new_game(&mut self) {
        self.searcher.clear();
        self.last = None;
    }

    fn last_eval(&self) -> Option<crate::lichess::chat_commands::EvalReport> {
        self.last.clone()
    }
}

/// The chat/summary view of a search result.
fn eval_report(result: &search::SearchResult) -> crate::lichess::chat_commands::EvalReport {
    use crate::lichess::chat_commands::{EvalReport, EvalScore};
    let info = &result.info;
    EvalReport {
        score: Some(match info.score {
            search::Score::Cp(cp) => EvalScore::Cp(cp),
            search::Score::Mate(n) => EvalScore::Mate(n),
        }),
        win_probability: Some(result.win_probability),
        pv: info.pv.iter().map(ToString::to_string).collect(),
        nodes: info.nodes,
        depth: info.depth,
        source: None,
    }
}

/// Creates a [`SearcherPicker`] per game, with that game's share of the hash and a distinct
/// seed (opening choices are randomized so the bot cannot be farmed with one line).
#[derive(Debug, Default)]
pub struct SearcherFactory {
    games: std::sync::atomic::AtomicU64,
    algorithm: search::Algorithm,
    /// The network every game's searcher evaluates with (one copy, shared).
    network: Option<std::sync::Arc<search::nnue::Network>>,
}

impl SearcherFactory {
    /// A factory of searchers running `algorithm`, evaluating with `network` (or linearly).
    pub fn new(
        algorithm: search::Algorithm,
        network: Option<std::sync::Arc<search::nnue::Network>>,
    ) -> Self {
        SearcherFactory {
            games: std::sync::atomic::AtomicU64::new(0),
            algorithm,
            network,
        }
    }
}

impl PickerFactory for SearcherFactory {
    fn create(&self, hash_mb: u64) -> Box<dyn MovePicker> {
        let n = self.games.fetch_add(1, Ordering::Relaxed);
        let seed = mix(n ^ std::process::id() as u64 ^ 0xA70_41C);
        Box::new(SearcherPicker::new(SearchConfig {
            algorithm: self.algorithm,
            hash_mb: usize::try_from(hash_mb).unwrap_or(usize::MAX),
            threads: 1,
            seed,
            randomize: true,
            network: self.network.clone(),
            ..SearchConfig::default()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atomic_chess::Position;

    #[test]
    fn takes_the_king_when_it_can() {
        // White knight on f7's neighbourhood: Nxf7 blows up the black king on e8.
        let game =
            Game::from_uci_moves(Position::startpos(), &["g1f3", "a7a6", "f3g5", "a6a5"]).unwrap();
        let stop = AtomicBool::new(false);
        let budget = Budget {
            soft: Duration::ZERO,
            hard: Duration::ZERO,
            threads: 1,
        };
        let pick = SimplePicker::default().pick(&game, &budget, &stop).unwrap();
        assert_eq!(pick.mv.to_string(), "g5f7");
        assert_eq!(pick.proven, Some(Proven::Win(1)));
    }

    #[test]
    fn searcher_picker_answers_even_with_a_zero_budget() {
        let game = Game::new(Position::startpos());
        let stop = AtomicBool::new(false);
        let budget = Budget {
            soft: Duration::ZERO,
            hard: Duration::ZERO,
            threads: 1,
        };
        let mut p = SearcherFactory::default().create(8);
        let t = std::time::Instant::now();
        let pick = p.pick(&game, &budget, &stop).unwrap();
        assert!(game.position().is_legal(pick.mv));
        assert!(
            t.elapsed() < Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn searcher_ponder_on_two_threads_stops_on_the_flag() {
        let game = Game::from_uci_moves(Position::startpos(), &["e2e4"]).unwrap();
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let mut p = SearcherFactory::default().create(8);
        let t = std::thread::spawn(move || {
            p.ponder(&game, 2, &flag);
            p
        });
        std::thread::sleep(Duration::from_millis(100));
        let asked = std::time::Instant::now();
        stop.store(true, Ordering::Relaxed);
        let _p = t.join().unwrap();
        assert!(asked.elapsed() < Duration::from_millis(500));
    }

    #[test]
    fn plays_a_whole_game_with_legal_moves() {
        let mut game = Game::new(Position::startpos());
        let stop = AtomicBool::new(false);
        let budget = Budget {
            soft: Duration::ZERO,
            hard: Duration::ZERO,
            threads: 1,
        };
        let mut w = SimplePicker { seed: 1 };
        let mut b = SimplePicker { seed: 2 };
        for ply in 0..600 {
            if game.outcome().is_some() {
                break;
            }
            let p = if ply % 2 == 0 { &mut w } else { &mut b };
            let pick = p.pick(&game, &budget, &stop).unwrap();
            game.play(pick.mv).unwrap();
        }
    }
}
