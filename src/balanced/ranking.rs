//! The 16 Balanced starts searched and ranked for White.
//!
//! White chooses the removal, so the best start for White comes first. Each start is searched
//! from a fresh table (no start learns from another) with the same limit, Black to move; the
//! search's score (Black's) is turned into White's, and the best move is Black's best reply.
//!
//! The limit is a time (`--movetime`, what a player asks) or a node count (`--nodes`: on one
//! thread the same ranking on any machine under any load, which the demo's choice uses).

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use atomic_chess::{Game, Move};

use super::Removal;
use crate::search::{Limits, Score, SearchConfig, Searcher};

/// One searched start.
#[derive(Clone, Debug)]
pub struct Ranked {
    /// The pawn removed.
    pub removal: Removal,
    /// The evaluation from White's side (the search's score, negated: Black is to move).
    pub white: Score,
    /// Black's best reply; `None` only if Black had no move (never in these starts).
    pub reply: Option<Move>,
    /// Depth reached.
    pub depth: u32,
    /// Nodes searched.
    pub nodes: u64,
}

/// How long each start is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// This long (the hard limit of the search, as UCI's `go movetime`).
    Time(Duration),
    /// This many nodes (deterministic on one thread).
    Nodes(u64),
}

impl Budget {
    /// The search limits of the budget.
    pub fn limits(self) -> Limits {
        match self {
            Budget::Time(t) => Limits {
                hard: Some(t),
                ..Limits::default()
            },
            Budget::Nodes(n) => Limits {
                nodes: Some(n),
                ..Limits::default()
            },
        }
    }
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::Time(t) => write!(f, "{} ms", t.as_millis()),
            Budget::Nodes(n) => write!(f, "{n} nodes"),
        }
    }
}

/// Searches one start within `budget` from a fresh table.
pub fn search_start(searcher: &mut Searcher, removal: Removal, budget: Budget) -> Ranked {
    searcher.clear();
    let stop = AtomicBool::new(false);
    let game = Game::new(removal.position());
    let result = searcher.search(&game, &budget.limits(), &stop, &mut |_| {});
    Ranked {
        removal,
        white: negate(result.info.score),
        reply: result.best_move,
        depth: result.info.depth,
        nodes: result.info.nodes,
    }
}

/// Searches all 16 starts within `budget` each and returns them best for White first (ties in
/// [`Removal::all`]'s order); `progress` sees each as it is done.
pub fn rank(
    config: &SearchConfig,
    budget: Budget,
    progress: &mut dyn FnMut(&Ranked),
) -> Vec<Ranked> {
    let mut config = config.clone();
    // The ranking measures the starts, not a randomised opening choice.
    config.randomize = false;
    let mut searcher = Searcher::new(config);
    let mut ranked: Vec<Ranked> = Removal::all()
        .into_iter()
        .map(|r| {
            let done = search_start(&mut searcher, r, budget);
            progress(&done);
            done
        })
        .collect();
    sort_for_white(&mut ranked);
    ranked
}

/// Best for White first: a mate for White (the sooner the better), then the centipawns, then
/// a mate for Black (the later the better). Stable, so equal scores keep their order.
pub fn sort_for_white(ranked: &mut [Ranked]) {
    ranked.sort_by_key(|r| std::cmp::Reverse(order_key(r.white)));
}

/// A key that grows with how good the score is for the side it belongs to.
fn order_key(score: Score) -> i64 {
    const MATE: i64 = 1_000_000;
    match score {
        Score::Cp(cp) => i64::from(cp),
        Score::Mate(n) if n > 0 => MATE - i64::from(n),
        Score::Mate(n) => -MATE - i64::from(n),
    }
}

/// The score from the other side.
fn negate(score: Score) -> Score {
    match score {
        Score::Cp(cp) => Score::Cp(-cp),
        Score::Mate(n) => Score::Mate(-n),
    }
}

/// A score as a reader wants it: `+35 cp`, `-120 cp`, `mate in 3` (White mates in 3 moves) or
/// `mated in 4` (Black mates in 4), always from White's side.
pub fn describe(score: Score) -> String {
    match score {
        Score::Cp(cp) => format!("{cp:+} cp"),
        Score::Mate(n) if n > 0 => format!("mate in {n}"),
        Score::Mate(n) => format!("mated in {}", n.unsigned_abs()),
    }
}

/// The ranking as a table: rank, pawn, White's evaluation, Black's reply, depth, FEN.
pub fn render(ranked: &[Ranked]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>2}  {:<8}  {:>10}  {:<5}  {:>5}  fen",
        "#", "removed", "for White", "reply", "depth"
    );
    for (i, r) in ranked.iter().enumerate() {
        let reply = r.reply.map_or("-".to_owned(), |m| m.to_string());
        let _ = writeln!(
            out,
            "{:>2}  {:<8}  {:>10}  {:<5}  {:>5}  {}",
            i + 1,
            r.removal.to_string(),
            describe(r.white),
            reply,
            r.depth,
            r.removal.fen()
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Algorithm;
    use atomic_chess::Color;

    fn ranked(square: &str, white: Score) -> Ranked {
        Ranked {
            removal: square.parse().unwrap(),
            white,
            reply: None,
            depth: 0,
            nodes: 0,
        }
    }

    #[test]
    fn white_mates_first_then_centipawns_then_blacks_mates_latest_first() {
        let mut list = vec![
            ranked("a2", Score::Cp(-40)),
            ranked("b2", Score::Mate(-2)),
            ranked("c2", Score::Mate(3)),
            ranked("d2", Score::Cp(120)),
            ranked("e2", Score::Mate(-7)),
            ranked("f2", Score::Mate(1)),
            ranked("g2", Score::Cp(120)),
        ];
        sort_for_white(&mut list);
        let order: Vec<String> = list.iter().map(|r| r.removal.square()).collect();
        assert_eq!(order, ["f2", "c2", "d2", "g2", "a2", "e2", "b2"]);
    }

    #[test]
    fn budgets_are_search_limits() {
        let t = Budget::Time(Duration::from_millis(250)).limits();
        assert_eq!(
            (t.hard, t.soft, t.nodes),
            (Some(Duration::from_millis(250)), None, None)
        );
        let n = Budget::Nodes(5000).limits();
        assert_eq!((n.hard, n.nodes), (None, Some(5000)));
        assert_eq!(Budget::Nodes(5000).to_string(), "5000 nodes");
        assert_eq!(Budget::Time(Duration::from_secs(1)).to_string(), "1000 ms");
    }

    #[test]
    fn scores_read_from_whites_side() {
        assert_eq!(describe(negate(Score::Cp(35))), "-35 cp");
        assert_eq!(describe(Score::Cp(0)), "+0 cp");
        assert_eq!(describe(negate(Score::Mate(-3))), "mate in 3");
        assert_eq!(describe(negate(Score::Mate(2))), "mated in 2");
    }

    /// A real search of one start: Black's reply is a legal Black move, and the table names
    /// the pawn, the evaluation and the FEN.
    #[test]
    fn a_start_is_searched_with_black_to_move() {
        let config = SearchConfig {
            algorithm: Algorithm::AlphaBeta,
            hash_mb: 4,
            ..SearchConfig::default()
        };
        let mut searcher = Searcher::new(config);
        let removal: Removal = "f7".parse().unwrap();
        let done = search_start(&mut searcher, removal, Budget::Nodes(20_000));
        let reply = done.reply.expect("Black has moves");
        let pos = removal.position();
        assert_eq!(pos.turn(), Color::Black);
        assert!(pos.legal_moves().contains(&reply), "{reply}");
        assert!(done.depth >= 1 && done.nodes >= 20_000, "{done:?}");
        // A node budget gives the same search again.
        let again = search_start(&mut searcher, removal, Budget::Nodes(20_000));
        assert_eq!((again.reply, again.white), (done.reply, done.white));
        let table = render(&[done]);
        assert!(table.contains("black f7"), "{table}");
        assert!(table.contains(&removal.fen()), "{table}");
        assert!(table.contains(" cp") || table.contains("mate"), "{table}");
    }
}
