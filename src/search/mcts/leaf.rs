//! A leaf's first visit: the solver's terminal checks (repetition, a king blown up, mate,
//! stalemate, a win or loss at once, the fifty-move rule, insufficient material), else the
//! quiescence evaluation, or with `MctsLeafDepth` > 0 a shallow alpha-beta search
//! (`alphabeta/leaf.rs`), mapped to a win probability. The pure part of the quiescence
//! leaves also runs on worker threads in batched searches (`batch.rs`), which have no
//! alpha-beta leaves.

use std::sync::atomic::AtomicBool;

use atomic_chess::{MoveList, Position};

use super::Mcts;
use crate::search::SearchParams;
use crate::search::alphabeta::LeafSearch;
use crate::search::eval::{self, Evaluator, QStats};
use crate::search::tree::{NodeId, Proof};

impl Mcts {
    /// First visit of a node: terminal checks, then the quiescence evaluation or the leaf
    /// search. Returns the value for the player who moved into the node.
    pub(super) fn evaluate(&mut self, id: NodeId, pos: &Position, stop: &AtomicBool) -> f32 {
        self.stats.positions += 1;
        let leaf = match self.leaf_search.as_mut() {
            Some(search) if self.config.params.mcts_leaf_depth > 0 => search_leaf(
                &self.keys,
                pos,
                &self.config.params,
                search,
                stop,
                &mut self.qstats,
                &mut self.evaluator,
            ),
            _ => evaluate_leaf(
                &self.keys,
                pos,
                &self.config.params,
                &mut self.qstats,
                &mut self.evaluator,
            ),
        };
        self.set_leaf(id, leaf)
    }

    /// Stores a leaf evaluation in its node; returns the value for the player who moved into it.
    pub(super) fn set_leaf(&mut self, id: NodeId, leaf: Leaf) -> f32 {
        if let Some(proof) = leaf.proof {
            self.tree.get_mut(id).proof = proof;
        }
        leaf.value
    }
}

/// A leaf's evaluation: its proof if the game is decided there, and its value for the player
/// who moved into it (exact for a proof).
#[derive(Clone, Copy, Debug)]
pub(super) struct Leaf {
    pub(super) proof: Option<Proof>,
    pub(super) value: f32,
}

/// First visit of a position: terminal checks, then the quiescence evaluation. `keys` ends with
/// the repetition keys of the position's path (its own key last), back at least to its last
/// irreversible move. Pure but for the `evaluator`'s scratch accumulators (each thread has
/// its own): batched searches run it on worker threads.
pub(super) fn evaluate_leaf(
    keys: &[u64],
    pos: &Position,
    params: &SearchParams,
    qstats: &mut QStats,
    evaluator: &mut Evaluator,
) -> Leaf {
    let mut moves = MoveList::new();
    pos.legal_moves_into(&mut moves);
    if let Some(proof) = terminal(keys, pos, &moves) {
        let value = proof.value_for_mover().unwrap_or(0.5);
        return Leaf {
            proof: Some(proof),
            value,
        };
    }
    let cp = eval::qsearch_root_with(pos, &moves, params, qstats, evaluator);
    Leaf {
        proof: None,
        value: 1.0 - eval::win_probability(cp, params.eval_scale),
    }
}

/// [`evaluate_leaf`] with the value of an undecided position from an alpha-beta search of
/// `MctsLeafDepth` plies. Its mate scores are not proofs (they can rest on pruned moves):
/// they only make the value nearly certain. A search cut short by `stop` leaves the
/// quiescence value.
fn search_leaf(
    keys: &[u64],
    pos: &Position,
    params: &SearchParams,
    search: &mut LeafSearch,
    stop: &AtomicBool,
    qstats: &mut QStats,
    evaluator: &mut Evaluator,
) -> Leaf {
    let mut moves = MoveList::new();
    pos.legal_moves_into(&mut moves);
    if let Some(proof) = terminal(keys, pos, &moves) {
        let value = proof.value_for_mover().unwrap_or(0.5);
        return Leaf {
            proof: Some(proof),
            value,
        };
    }
    let depth = params.mcts_leaf_depth as i32;
    let cp = match search.search(pos, keys, depth, stop) {
        Some((score, _)) => score,
        None => eval::qsearch_root_with(pos, &moves, params, qstats, evaluator),
    };
    Leaf {
        proof: None,
        value: 1.0 - eval::win_probability(cp, params.eval_scale),
    }
}

/// The solver's view of a position reached in the tree, if the game is decided there. `keys`
/// as for [`evaluate_leaf`].
fn terminal(keys: &[u64], pos: &Position, moves: &MoveList) -> Option<Proof> {
    // Repetition (twofold, as Lc0 does): the key seen before since the last irreversible move.
    let len = keys.len();
    let window = (pos.halfmove_clock() as usize).min(len - 1);
    if keys[len - 1 - window..len - 1].contains(&keys[len - 1]) {
        return Some(Proof::Draw);
    }
    if pos.board().king_of(pos.turn()).is_none() {
        return Some(Proof::Loss(0));
    }
    if moves.is_empty() {
        return Some(if pos.is_check() {
            Proof::Loss(0)
        } else {
            Proof::Draw
        });
    }
    // Two-ply look-ahead: a king-exploding capture or a checkmate wins at once.
    if eval::any_wins_or_mates_at_once(pos, moves) {
        return Some(Proof::Win(1));
    }
    if pos.halfmove_clock() >= 100 || pos.is_insufficient_material() {
        return Some(Proof::Draw);
    }
    // The opponent's side of the look-ahead: every move allows a king-exploding capture.
    if eval::loses_at_once(pos, moves) {
        return Some(Proof::Loss(2));
    }
    None
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use atomic_chess::{Game, Move};

    use super::*;
    use crate::search::engine::{Engine, Limits, Proven, Score, SearchConfig, SearchResult};

    /// The shared puzzles (`tests/data/tactics.epd`) of a win in `mate` moves: position and
    /// best move.
    fn puzzles(mate: u32) -> Vec<(Position, String)> {
        include_str!("../../../tests/data/tactics.epd")
            .lines()
            .filter(|l| l.contains(&format!("; mate {mate};")))
            .map(|l| {
                let mut fields = l.split(';');
                let pos = Position::from_fen(fields.next().expect("a FEN")).expect("valid FEN");
                let bm = fields.next().expect("bm").trim().trim_start_matches("bm ");
                (pos, bm.to_string())
            })
            .collect()
    }

    fn leaf_config(depth: u32) -> SearchConfig {
        SearchConfig {
            hash_mb: 16,
            params: SearchParams {
                mcts_leaf_depth: depth,
                ..SearchParams::default()
            },
            ..SearchConfig::default()
        }
    }

    fn search(mcts: &mut Mcts, game: &Game, nodes: u64) -> SearchResult {
        let limits = Limits {
            nodes: Some(nodes),
            ..Limits::default()
        };
        mcts.search(game, &limits, &AtomicBool::new(false), 1, None, &mut |_| {})
    }

    /// With alpha-beta leaves the solver still plays every win in one at once, whatever the
    /// budget (even zero playouts), and proves it.
    #[test]
    fn wins_in_one_at_any_budget_with_leaf_searches() {
        let puzzles = puzzles(1);
        assert!(puzzles.len() >= 20);
        for depth in [1, 2, 3] {
            let mut mcts = Mcts::new(&leaf_config(depth));
            for (pos, _) in &puzzles {
                for nodes in [0, 1, 2, 50] {
                    mcts.clear();
                    let result = search(&mut mcts, &Game::new(*pos), nodes);
                    let best = result.best_move.expect("a move");
                    let outcome = pos.play(best).expect("legal").outcome();
                    assert_eq!(
                        outcome.map(|o| o.winner),
                        Some(Some(pos.turn())),
                        "depth {depth}, {nodes} nodes: {best} in {}",
                        pos.to_fen()
                    );
                    assert_eq!(result.proven, Some(Proven::Win(1)));
                    assert_eq!(result.info.score, Score::Mate(1));
                }
            }
        }
    }

    /// Proofs deeper than a move still propagate with alpha-beta leaves: most wins in two are
    /// proven and played (the leaf searches' mate scores are only values, never proofs).
    #[test]
    fn forced_wins_in_two_are_proven_with_leaf_searches() {
        let puzzles = puzzles(2);
        let mut mcts = Mcts::new(&leaf_config(2));
        let mut proven = 0;
        for (pos, _) in &puzzles {
            mcts.clear();
            let result = search(&mut mcts, &Game::new(*pos), 1000);
            if let Some(Proven::Win(n)) = result.proven {
                assert!(n <= 2, "{}: win in {n}", pos.to_fen());
                assert_eq!(result.info.score, Score::Mate(n as i32));
                proven += 1;
            }
        }
        assert!(
            proven * 10 >= puzzles.len() * 9,
            "{proven} of {} proven",
            puzzles.len()
        );
    }

    /// What a search is compared on: move, score, line, playouts and positions.
    type Outcome = (Option<Move>, Score, Vec<Move>, u64, u64);

    /// A fixed seed, node limit and one thread give the same move, score, line and counters
    /// with alpha-beta leaves, over two moves of a game (the leaf table and histories carry
    /// over); the leaf searches did search.
    #[test]
    fn leaf_searches_are_deterministic() {
        let pos = Position::from_fen(
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/4P3/2N5/PPPP1PPP/R1BQKBNR w KQkq - 2 3",
        )
        .expect("valid FEN");
        let run = || {
            let mut mcts = Mcts::new(&leaf_config(2));
            let mut game = Game::new(pos);
            let mut out: Vec<Outcome> = Vec::new();
            for _ in 0..2 {
                let result = search(&mut mcts, &game, 1500);
                let stats = mcts.stats();
                out.push((
                    result.best_move,
                    result.info.score,
                    result.info.pv.clone(),
                    stats.playouts,
                    stats.positions,
                ));
                game.play(result.best_move.expect("a move")).expect("legal");
            }
            out
        };
        let first = run();
        assert_eq!(first, run());
        // Each of the 1500 playouts' new leaf was searched two plies deep (and more).
        assert!(first[0].4 > 10 * 1500, "{} positions", first[0].4);
    }
}
