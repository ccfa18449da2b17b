//! The lichess opening explorer's answer (`GET /lichess?variant=atomic&fen=…`, API.md §9.1) and
//! the choice of a book move: among the moves played at least `min_games` times and scoring at
//! least `min_score` for the side that played them, one at random, weighted by games × score.
//! Pure functions of the answer and a random number, so the choice is reproducible from a seed.

use serde_json::Value;

use crate::lichess::lenient::{Fields, FromJson, Unreadable};

/// One move of the answer with its games' results.
#[derive(Clone, Debug, PartialEq)]
pub struct ExplorerMove {
    /// The move (UCI; castling may be king-onto-rook).
    pub uci: String,
    /// Games White won after it.
    pub white: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games Black won.
    pub black: u64,
}

impl FromJson for ExplorerMove {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("explorer move", v)?;
        Ok(ExplorerMove {
            uci: f.required("uci")?,
            white: f.required("white")?,
            draws: f.required("draws")?,
            black: f.required("black")?,
        })
    }
}

impl ExplorerMove {
    /// Games played with it.
    pub fn games(&self) -> u64 {
        self.white
            .saturating_add(self.draws)
            .saturating_add(self.black)
    }

    /// The score of the side that played it: wins and half the draws, over the games.
    pub fn score(&self, white_moved: bool) -> f64 {
        let games = self.games();
        if games == 0 {
            return 0.0;
        }
        let wins = if white_moved { self.white } else { self.black };
        (wins as f64 + self.draws as f64 / 2.0) / games as f64
    }
}

/// The answer for one position (the totals are not needed: the moves are).
#[derive(Clone, Debug, PartialEq)]
pub struct ExplorerAnswer {
    /// The moves played from here (unreadable entries are dropped).
    pub moves: Vec<ExplorerMove>,
}

impl FromJson for ExplorerAnswer {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("explorer", v)?;
        Ok(ExplorerAnswer {
            moves: f.required("moves")?,
        })
    }
}

/// A move over the thresholds, with its games and score.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The move (UCI).
    pub uci: String,
    /// Its games.
    pub games: u64,
    /// Its score for the side that plays it.
    pub score: f64,
}

/// The moves with at least `min_games` games and `min_score` for the mover.
pub fn candidates(
    answer: &ExplorerAnswer,
    white_to_move: bool,
    min_games: u64,
    min_score: f64,
) -> Vec<Candidate> {
    answer
        .moves
        .iter()
        .filter(|m| m.games() >= min_games.max(1))
        .map(|m| Candidate {
            uci: m.uci.clone(),
            games: m.games(),
            score: m.score(white_to_move),
        })
        .filter(|c| c.score >= min_score)
        .collect()
}

/// One candidate at random, weighted by games × score; `random` is a uniformly drawn 64-bit
/// number (the caller's seeded generator).
pub fn choose(candidates: &[Candidate], random: u64) -> Option<&Candidate> {
    let weight = |c: &Candidate| c.games as f64 * c.score;
    let total: f64 = candidates.iter().map(weight).sum();
    if total <= 0.0 {
        return None;
    }
    // 53 random bits: a uniform fraction of the total weight.
    let mut left = (random >> 11) as f64 / (1u64 << 53) as f64 * total;
    for c in candidates {
        left -= weight(c);
        if left < 0.0 {
            return Some(c);
        }
    }
    candidates.iter().rev().find(|c| weight(c) > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lichess::online::mix;

    fn answer() -> ExplorerAnswer {
        ExplorerAnswer::from_json(serde_json::json!({
            "white": 100, "draws": 10, "black": 90,
            "moves": [
                {"uci": "g1f3", "san": "Nf3", "white": 600, "draws": 50, "black": 350, "averageRating": 2100},
                {"uci": "e2e3", "white": 300, "draws": 20, "black": 280},
                {"uci": "e2e4", "white": 100, "draws": 0, "black": 300},
                {"uci": "a2a3", "white": 5, "draws": 0, "black": 0},
                {"uci": "d2d4", "white": "40", "draws": 10, "black": 50},
                "junk"
            ]
        }))
        .unwrap()
    }

    #[test]
    fn only_moves_over_both_thresholds() {
        let a = answer();
        assert_eq!(a.moves.len(), 5);
        let c = candidates(&a, true, 10, 0.45);
        let ucis: Vec<&str> = c.iter().map(|c| c.uci.as_str()).collect();
        // e2e4 scores 25 % for White, a2a3 has 5 games.
        assert_eq!(ucis, ["g1f3", "e2e3", "d2d4"]);
        assert!((c[0].score - 0.625).abs() < 1e-9);
        // The same moves scored for Black: g1f3 (37.5 %) goes, e2e4 (75 %) comes in.
        let c = candidates(&a, false, 10, 0.45);
        let ucis: Vec<&str> = c.iter().map(|c| c.uci.as_str()).collect();
        assert_eq!(ucis, ["e2e3", "e2e4", "d2d4"]);
        assert!(candidates(&a, true, 10_000, 0.0).is_empty());
    }

    #[test]
    fn the_choice_follows_the_weights_and_the_seed() {
        let c = candidates(&answer(), true, 10, 0.45);
        let mut counts = [0usize; 3];
        for i in 0..6000u64 {
            let pick = choose(&c, mix(i)).unwrap();
            counts[c.iter().position(|x| x.uci == pick.uci).unwrap()] += 1;
        }
        // Weights: 1000 × 0.625 = 625, 600 × 0.517 = 310, 100 × 0.45 = 45 (of 980).
        let share = |n: usize| n as f64 / 6000.0;
        assert!(
            (share(counts[0]) - 625.0 / 980.0).abs() < 0.03,
            "{counts:?}"
        );
        assert!(
            (share(counts[1]) - 310.0 / 980.0).abs() < 0.03,
            "{counts:?}"
        );
        assert!((share(counts[2]) - 45.0 / 980.0).abs() < 0.02, "{counts:?}");
        // The same number, the same move; different seeds, different moves.
        assert_eq!(choose(&c, mix(7)), choose(&c, mix(7)));
        let picks: std::collections::HashSet<&str> = (0..20)
            .map(|s| choose(&c, mix(s)).unwrap().uci.as_str())
            .collect();
        assert!(picks.len() >= 2, "{picks:?}");
        assert_eq!(choose(&[], 5), None);
    }
}
