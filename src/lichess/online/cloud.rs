//! lichess's cloud evaluation (`GET /api/cloud-eval?fen=…&variant=atomic`, API.md §9.1) as a
//! book: the first move of its best line, when it was searched deep enough. lichess keeps atomic
//! evaluations only for early, balanced positions; elsewhere it answers 404.

use serde_json::Value;

use crate::lichess::lenient::{Fields, FromJson, Unreadable};

/// One line of the evaluation.
#[derive(Clone, Debug, PartialEq)]
pub struct CloudLine {
    /// The line's moves (UCI), first move first.
    pub moves: Vec<String>,
    /// Its score for White, centipawns (absent for a mate).
    pub cp: Option<i32>,
    /// Mate in N for White (negative: Black mates), when it is one.
    pub mate: Option<i32>,
}

impl FromJson for CloudLine {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("cloud eval line", v)?;
        let moves: String = f.required("moves")?;
        Ok(CloudLine {
            moves: moves.split_ascii_whitespace().map(str::to_owned).collect(),
            cp: f.optional("cp"),
            mate: f.optional("mate"),
        })
    }
}

/// The answer for one position.
#[derive(Clone, Debug, PartialEq)]
pub struct CloudAnswer {
    /// Search depth of the evaluation.
    pub depth: u32,
    /// Thousands of nodes searched.
    pub knodes: u64,
    /// The lines, best first.
    pub pvs: Vec<CloudLine>,
}

impl FromJson for CloudAnswer {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let mut f = Fields::new("cloud eval", v)?;
        Ok(CloudAnswer {
            depth: f.required("depth")?,
            knodes: f.lenient("knodes"),
            pvs: f.required("pvs")?,
        })
    }
}

/// The first move of the best line and that line, when the evaluation is at least
/// `min_depth` deep.
pub fn book_move(answer: &CloudAnswer, min_depth: u32) -> Option<(&str, &CloudLine)> {
    if answer.depth < min_depth {
        return None;
    }
    let line = answer.pvs.first()?;
    Some((line.moves.first()?.as_str(), line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_line_of_a_deep_enough_evaluation() {
        let a = CloudAnswer::from_json(serde_json::json!({
            "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "knodes": 1200, "depth": "32",
            "pvs": [{"moves": "g1f3 f7f6 e2e3", "cp": 21}, {"moves": "e2e3 f7f6", "cp": 5}]
        }))
        .unwrap();
        let (mv, line) = book_move(&a, 20).unwrap();
        assert_eq!((mv, line.cp, line.moves.len()), ("g1f3", Some(21), 3));
        assert_eq!(book_move(&a, 33), None);
        let empty = CloudAnswer::from_json(serde_json::json!({"depth": 40, "pvs": []})).unwrap();
        assert_eq!(book_move(&empty, 20), None);
        let e = CloudAnswer::from_json(serde_json::json!({"pvs": []})).unwrap_err();
        assert!(e.to_string().contains("depth"), "{e}");
    }
}
