//! The lichess atomic tablebase's answer (`GET /atomic?fen=…`, API.md §9.1) and the choice of
//! its best move: a pure function of the answer.
//!
//! Each move's `category` (and `dtz`, `dtm`) is the result of the position *after* the move
//! from the view of the side to move there, our opponent; so the best move leaves the opponent
//! worst off: `loss` first, `win` last. Among moves of one category, a won one is won fastest,
//! a lost one lost slowest (`dtm` where both moves have one, else `dtz`).

use std::cmp::Ordering;

use serde_json::Value;

use crate::lichess::lenient::{Fields, FromJson, Unreadable};

/// A tablebase result from the view of the side to move, in lichess's order: best first
/// (`syzygy-*`: the result of a `maybe-*` or `cursed`/`blessed` kind that DTZ rounding hides).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// Won.
    Win,
    /// Won, or only a cursed win: the exact result is hidden by DTZ rounding.
    SyzygyWin,
    /// Won, unless the 50-move rule interferes in some line (DTZ rounding).
    MaybeWin,
    /// Won, but not within the 50-move rule: a draw under it.
    CursedWin,
    /// Drawn.
    Draw,
    /// Lost, but saved by the 50-move rule: a draw under it.
    BlessedLoss,
    /// Lost, unless the 50-move rule interferes.
    MaybeLoss,
    /// Lost, or only a blessed loss: the exact result is hidden by DTZ rounding.
    SyzygyLoss,
    /// Lost.
    Loss,
    /// The tablebase does not know (too many pieces, or a source without that position).
    Unknown,
}

impl Category {
    /// lichess's name (`cursed-win`...); an unknown name reads as [`Category::Unknown`].
    pub fn parse(name: &str) -> Category {
        match name {
            "win" => Category::Win,
            "syzygy-win" => Category::SyzygyWin,
            "maybe-win" => Category::MaybeWin,
            "cursed-win" => Category::CursedWin,
            "draw" => Category::Draw,
            "blessed-loss" => Category::BlessedLoss,
            "maybe-loss" => Category::MaybeLoss,
            "syzygy-loss" => Category::SyzygyLoss,
            "loss" => Category::Loss,
            _ => Category::Unknown,
        }
    }

    /// lichess's name.
    pub fn name(self) -> &'static str {
        match self {
            Category::Win => "win",
            Category::SyzygyWin => "syzygy-win",
            Category::MaybeWin => "maybe-win",
            Category::CursedWin => "cursed-win",
            Category::Draw => "draw",
            Category::BlessedLoss => "blessed-loss",
            Category::MaybeLoss => "maybe-loss",
            Category::SyzygyLoss => "syzygy-loss",
            Category::Loss => "loss",
            Category::Unknown => "unknown",
        }
    }

    /// The same result from the other side's view.
    pub fn flip(self) -> Category {
        match self {
            Category::Win => Category::Loss,
            Category::SyzygyWin => Category::SyzygyLoss,
            Category::MaybeWin => Category::MaybeLoss,
            Category::CursedWin => Category::BlessedLoss,
            Category::Draw => Category::Draw,
            Category::BlessedLoss => Category::CursedWin,
            Category::MaybeLoss => Category::MaybeWin,
            Category::SyzygyLoss => Category::SyzygyWin,
            Category::Loss => Category::Win,
            Category::Unknown => Category::Unknown,
        }
    }

    /// Whether the side to move wins (in any sense, cursed included).
    fn winning(self) -> bool {
        matches!(
            self,
            Category::Win | Category::SyzygyWin | Category::MaybeWin | Category::CursedWin
        )
    }

    /// A win probability for the side to move, for draw offers and `!eval`.
    pub fn win_probability(self) -> f32 {
        match self {
            Category::Win => 0.99,
            Category::SyzygyWin | Category::MaybeWin => 0.9,
            Category::CursedWin | Category::Draw | Category::BlessedLoss | Category::Unknown => 0.5,
            Category::SyzygyLoss | Category::MaybeLoss => 0.1,
            Category::Loss => 0.01,
        }
    }
}

/// One move of the answer; its numbers are the resulting position's, opponent to move.
#[derive(Clone, Debug, PartialEq)]
pub struct TablebaseMove {
    /// The move (UCI).
    pub uci: String,
    /// The result for the opponent after it.
    pub category: Category,
    /// Distance to zeroing (signed from the opponent's view), if given.
    pub dtz: Option<i32>,
    /// Distance to mate (signed from the opponent's view), if given.
    pub dtm: Option<i32>,
    /// The move wins at once (the opponent's king explodes, or mate).
    pub wins_now: bool,
}

impl FromJson for TablebaseMove {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("tablebase move", v)?;
        let category: String = f.required("category")?;
        Ok(TablebaseMove {
            uci: f.required("uci")?,
            category: Category::parse(&category),
            dtz: f.optional("dtz"),
            dtm: f.optional("dtm"),
            wins_now: f.lenient::<bool>("variant_loss") || f.lenient::<bool>("checkmate"),
        })
    }
}

/// The answer for one position.
#[derive(Clone, Debug, PartialEq)]
pub struct TablebaseAnswer {
    /// The position's result for the side to move.
    pub category: Category,
    /// Its distance to zeroing, if given.
    pub dtz: Option<i32>,
    /// Its distance to mate, if given.
    pub dtm: Option<i32>,
    /// The legal moves (lichess sends them best first; unreadable entries are dropped).
    pub moves: Vec<TablebaseMove>,
}

impl FromJson for TablebaseAnswer {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("tablebase", v)?;
        let category: String = f.required("category")?;
        Ok(TablebaseAnswer {
            category: Category::parse(&category),
            dtz: f.optional("dtz"),
            dtm: f.optional("dtm"),
            moves: f.required("moves")?,
        })
    }
}

/// How good `m` is for us, smaller first: the opponent's category (loss first), then a win
/// now, then the distance (fastest win, slowest loss; draws have none).
fn compare(a: &TablebaseMove, b: &TablebaseMove) -> Ordering {
    // Opponent's Loss is our best: reverse lichess's order, Unknown last.
    let rank = |m: &TablebaseMove| match m.category {
        Category::Unknown => 0,
        c => 1 + (c as u8),
    };
    rank(b)
        .cmp(&rank(a))
        .then_with(|| b.wins_now.cmp(&a.wins_now))
        .then_with(|| {
            let distance = |m: &TablebaseMove, other: &TablebaseMove| {
                let d = match (m.dtm, other.dtm) {
                    (Some(x), Some(_)) => Some(x),
                    _ => m.dtz,
                };
                d.map(i32::unsigned_abs)
            };
            let (da, db) = (distance(a, b), distance(b, a));
            if a.category.flip().winning() {
                // We win: the shortest distance first, an unknown one after every known one.
                match (da, db) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    (Some(_), None) => Ordering::Less,
                    (None, Some(_)) => Ordering::Greater,
                    (None, None) => Ordering::Equal,
                }
            } else if a.category.winning() {
                // We lose: the longest first.
                db.cmp(&da)
            } else {
                Ordering::Equal
            }
        })
}

/// The best move of the answer and our result after it, or `None` when there is no move or
/// the best one is of unknown result (the search plays then).
pub fn best_move(answer: &TablebaseAnswer) -> Option<(&TablebaseMove, Category)> {
    let best = answer.moves.iter().min_by(|a, b| compare(a, b))?;
    (best.category != Category::Unknown).then(|| (best, best.category.flip()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mv(uci: &str, category: &str, dtz: Option<i32>, dtm: Option<i32>) -> TablebaseMove {
        TablebaseMove {
            uci: uci.into(),
            category: Category::parse(category),
            dtz,
            dtm,
            wins_now: false,
        }
    }

    fn answer(moves: Vec<TablebaseMove>) -> TablebaseAnswer {
        TablebaseAnswer {
            category: Category::Unknown,
            dtz: None,
            dtm: None,
            moves,
        }
    }

    #[test]
    fn lichess_order_and_names() {
        let all = [
            "win",
            "syzygy-win",
            "maybe-win",
            "cursed-win",
            "draw",
            "blessed-loss",
            "maybe-loss",
            "syzygy-loss",
            "loss",
        ];
        let parsed: Vec<Category> = all.iter().map(|n| Category::parse(n)).collect();
        assert!(parsed.windows(2).all(|w| w[0] < w[1]), "{parsed:?}");
        for (c, n) in parsed.iter().zip(all) {
            assert_eq!(c.name(), n);
            assert_eq!(c.flip().flip(), *c);
        }
        assert_eq!(Category::parse("what"), Category::Unknown);
        assert_eq!(Category::CursedWin.flip(), Category::BlessedLoss);
    }

    #[test]
    fn the_move_leaving_the_opponent_worst_off_wins() {
        // Every category once, in a scrambled order: the opponent's loss is chosen, and each
        // removal of the best leaves the next one in lichess's order, reversed.
        let mut moves = vec![
            mv("a1a2", "draw", Some(0), None),
            mv("b1b2", "win", Some(3), None),
            mv("c1c2", "blessed-loss", Some(-101), None),
            mv("d1d2", "unknown", None, None),
            mv("e1e2", "loss", Some(-5), None),
            mv("f1f2", "cursed-win", Some(102), None),
            mv("g1g2", "maybe-loss", Some(-7), None),
            mv("h1h2", "maybe-win", Some(9), None),
            mv("a3a4", "syzygy-loss", Some(-60), None),
            mv("b3b4", "syzygy-win", Some(61), None),
        ];
        let order = [
            ("e1e2", Category::Win),
            ("a3a4", Category::SyzygyWin),
            ("g1g2", Category::MaybeWin),
            ("c1c2", Category::CursedWin),
            ("a1a2", Category::Draw),
            ("f1f2", Category::BlessedLoss),
            ("h1h2", Category::MaybeLoss),
            ("b3b4", Category::SyzygyLoss),
            ("b1b2", Category::Loss),
        ];
        for (uci, ours) in order {
            let a = answer(moves.clone());
            let (best, result) = best_move(&a).unwrap();
            assert_eq!((best.uci.as_str(), result), (uci, ours));
            moves.retain(|m| m.uci != uci);
        }
        // Only the unknown one is left: no advice.
        assert_eq!(best_move(&answer(moves)), None);
        assert_eq!(best_move(&answer(vec![])), None);
    }

    #[test]
    fn fastest_win_slowest_loss() {
        let a = answer(vec![
            mv("a1a2", "loss", Some(-9), None),
            mv("b1b2", "loss", Some(-3), None),
            mv("c1c2", "loss", None, None),
        ]);
        assert_eq!(best_move(&a).unwrap().0.uci, "b1b2");
        // DTM decides where both moves have one.
        let a = answer(vec![
            mv("a1a2", "loss", Some(-1), Some(-21)),
            mv("b1b2", "loss", Some(-3), Some(-7)),
        ]);
        assert_eq!(best_move(&a).unwrap().0.uci, "b1b2");
        // Lost anyway: the longest resistance.
        let a = answer(vec![
            mv("a1a2", "win", Some(4), None),
            mv("b1b2", "win", Some(12), None),
            mv("c1c2", "win", Some(2), None),
        ]);
        let (best, ours) = best_move(&a).unwrap();
        assert_eq!((best.uci.as_str(), ours), ("b1b2", Category::Loss));
        // A win now beats a longer win of the same category.
        let mut now = mv("d1d2", "loss", Some(-1), None);
        now.wins_now = true;
        let a = answer(vec![mv("a1a2", "loss", Some(-1), None), now]);
        assert_eq!(best_move(&a).unwrap().0.uci, "d1d2");
    }

    #[test]
    fn reads_lichess_answers_leniently() {
        let a = TablebaseAnswer::from_json(
            serde_json::from_str(
                r#"{"category":"win","dtz":5,"dtm":null,"checkmate":false,"moves":[
                {"uci":"e1e2","san":"Ke2","category":"loss","dtz":"-4","dtm":null,"zz":1},
                {"uci":"e1d1","category":"draw","dtz":0.0},
                7,
                {"san":"Kf1","category":"win"}]}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(a.category, Category::Win);
        assert_eq!(a.moves.len(), 2, "{a:?}");
        assert_eq!(a.moves[0].dtz, Some(-4));
        assert_eq!(a.moves[1].dtz, Some(0));
        let e = TablebaseAnswer::from_json(serde_json::json!({"moves": []})).unwrap_err();
        assert!(e.to_string().contains("category"), "{e}");
    }
}
