//! The tablebase results one game has already been told, used when the tablebase cannot be
//! asked (paused after a 429, a timeout, an error): the search then plays only among the moves
//! whose results are known to be best, or at least not among those known to lose.
//!
//! Every answer of the tablebase gives the result of the position asked and of each position
//! one move later; in an ending the same positions come back again and again (the kings
//! shuffle, a move is repeated), so by the time the tablebase is unavailable many of the
//! current position's children are often already known. Nothing here asks the network: the
//! search never probes the tablebase inside its tree (lichess's tablebase is a web service,
//! too slow by orders of magnitude for that).
//!
//! Results are keyed by the position's Zobrist key (pieces, side to move, castling, en
//! passant), from the view of the side to move there.

use std::collections::HashMap;

use atomic_chess::{Move, Position};

use super::tablebase::{Category, TablebaseAnswer};

/// The known results of one game.
#[derive(Debug, Default)]
pub struct Known {
    results: HashMap<u64, Category>,
}

/// The categories that lose for the side to move whatever the 50-move rule does.
fn lost(category: Category) -> bool {
    matches!(
        category,
        Category::Loss | Category::SyzygyLoss | Category::MaybeLoss
    )
}

/// The categories that win for the side to move whatever the 50-move rule does.
fn won(category: Category) -> bool {
    matches!(
        category,
        Category::Win | Category::SyzygyWin | Category::MaybeWin
    )
}

impl Known {
    /// Records `answer`, the tablebase's answer for `pos`: its result and its moves' results.
    /// Moves that are not legal in `pos` (a wrong answer) are skipped.
    pub fn learn(&mut self, pos: &Position, answer: &TablebaseAnswer) {
        if answer.category != Category::Unknown {
            self.results.insert(pos.zobrist(), answer.category);
        }
        for m in &answer.moves {
            if m.category == Category::Unknown {
                continue;
            }
            let Ok(mv) = pos.parse_uci(&m.uci) else {
                continue;
            };
            if let Ok(child) = pos.play(mv) {
                self.results.insert(child.zobrist(), m.category);
            }
        }
    }

    /// How many positions have a known result.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// Whether nothing is known.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    /// The moves of `pos` the search should choose among, from the known results of the
    /// positions they lead to: the moves known to win with the best result, if any is known to
    /// win; else every move not known to lose (when some are). Empty: no restriction (nothing
    /// known that narrows the choice, or every move is known to lose).
    pub fn restriction(&self, pos: &Position) -> Vec<Move> {
        let legal = pos.legal_moves();
        // Each move with our result after it (the child's result from our side).
        let ours: Vec<(Move, Option<Category>)> = legal
            .iter()
            .map(|&mv| {
                let after = pos
                    .play(mv)
                    .ok()
                    .and_then(|child| self.results.get(&child.zobrist()))
                    .map(|c| c.flip());
                (mv, after)
            })
            .collect();
        let best_win = ours
            .iter()
            .filter_map(|(_, c)| *c)
            .filter(|&c| won(c))
            .min();
        let only: Vec<Move> = match best_win {
            Some(best) => ours
                .iter()
                .filter(|(_, c)| *c == Some(best))
                .map(|(mv, _)| *mv)
                .collect(),
            None => ours
                .iter()
                .filter(|(_, c)| !c.is_some_and(lost))
                .map(|(mv, _)| *mv)
                .collect(),
        };
        if only.len() == legal.len() {
            Vec::new()
        } else {
            only
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lichess::online::tablebase::TablebaseMove;

    fn answer(category: &str, moves: &[(&str, &str)]) -> TablebaseAnswer {
        TablebaseAnswer {
            category: Category::parse(category),
            dtz: None,
            dtm: None,
            moves: moves
                .iter()
                .map(|(uci, c)| TablebaseMove {
                    uci: (*uci).into(),
                    category: Category::parse(c),
                    dtz: None,
                    dtm: None,
                    wins_now: false,
                })
                .collect(),
        }
    }

    fn uci(moves: &[Move]) -> Vec<String> {
        let mut v: Vec<String> = moves.iter().map(ToString::to_string).collect();
        v.sort();
        v
    }

    /// White: king a1, rook h2; Black: king e8, knight b8. Five White king moves, 14 rook
    /// moves.
    const FEN: &str = "1n2k3/8/8/8/8/8/7R/K7 w - - 0 1";

    #[test]
    fn nothing_known_restricts_nothing() {
        let pos = Position::from_fen(FEN).unwrap();
        assert!(Known::default().restriction(&pos).is_empty());
    }

    #[test]
    fn a_known_win_restricts_the_search_to_the_best_known_wins() {
        let pos = Position::from_fen(FEN).unwrap();
        let mut known = Known::default();
        // The answer for the position itself: the categories are the opponent's after each.
        known.learn(
            &pos,
            &answer(
                "win",
                &[
                    ("h2h8", "loss"),
                    ("h2b2", "loss"),
                    ("h2h7", "maybe-loss"),
                    ("a1b1", "draw"),
                    ("h2e2", "win"),
                ],
            ),
        );
        assert_eq!(uci(&known.restriction(&pos)), ["h2b2", "h2h8"]);
        // Only a maybe-win known: those moves.
        let mut maybe = Known::default();
        maybe.learn(
            &pos,
            &answer("win", &[("h2h7", "maybe-loss"), ("a1b1", "draw")]),
        );
        assert_eq!(uci(&maybe.restriction(&pos)), ["h2h7"]);
    }

    #[test]
    fn without_a_known_win_the_known_losses_are_left_out() {
        let pos = Position::from_fen(FEN).unwrap();
        let mut known = Known::default();
        known.learn(
            &pos,
            &answer(
                "draw",
                &[
                    ("h2e2", "win"),
                    ("h2h8", "syzygy-win"),
                    ("a1b1", "draw"),
                    // A cursed win for them is a draw for us: not left out.
                    ("a1a2", "cursed-win"),
                    // Not legal here: ignored.
                    ("h2h1q", "win"),
                ],
            ),
        );
        let only = uci(&known.restriction(&pos));
        let legal = pos.legal_moves().len();
        assert_eq!(only.len(), legal - 2);
        assert!(!only.contains(&"h2e2".to_string()));
        assert!(!only.contains(&"h2h8".to_string()));
        assert!(only.contains(&"a1a2".to_string()));
    }

    #[test]
    fn every_move_known_to_lose_restricts_nothing() {
        let pos = Position::from_fen(FEN).unwrap();
        let all: Vec<String> = pos.legal_moves().iter().map(ToString::to_string).collect();
        let moves: Vec<(&str, &str)> = all.iter().map(|m| (m.as_str(), "win")).collect();
        let mut known = Known::default();
        known.learn(&pos, &answer("loss", &moves));
        assert!(known.restriction(&pos).is_empty());
    }

    #[test]
    fn results_learnt_from_another_position_apply_where_its_children_recur() {
        // Asked at FEN; the same position comes back after both kings go and return (other
        // move numbers, the same key).
        let pos = Position::from_fen(FEN).unwrap();
        let mut known = Known::default();
        known.learn(&pos, &answer("win", &[("h2h8", "loss")]));
        let mut later = pos;
        for m in ["a1b1", "e8d7", "b1a1", "d7e8"] {
            later = later.play(later.parse_uci(m).unwrap()).unwrap();
        }
        assert_eq!(uci(&known.restriction(&later)), ["h2h8"]);
        assert_eq!(known.len(), 2);
    }
}
