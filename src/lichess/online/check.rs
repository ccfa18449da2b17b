//! The safety check of a book move (explorer or cloud eval): lichess's players and evaluations
//! are not ours, so before a book move is played a short search of our own compares it with
//! the search's best. The move is refused when the reply is a proven win for the opponent, or
//! when it scores more than `max_loss_cp` below the search's best move.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use atomic_chess::{Game, Move};

use crate::lichess::chat_commands::{EvalReport, EvalScore};
use crate::lichess::picker::{Budget, MovePicker, Proven};

/// What the check found.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Play it; our win probability after it, as the check's search saw it.
    Safe {
        /// Our win probability.
        win_probability: f32,
    },
    /// Do not: why.
    Refused(String),
}

/// A mate's score in centipawns: beyond any material score, nearer mates larger.
const MATE_CP: i32 = 20_000;

/// A search's score for the side it searched for, in centipawns: the picker's own score when it
/// reports one, else its win probability through the logistic curve.
pub fn score_cp(eval: Option<&EvalReport>, win_probability: f32) -> i32 {
    match eval.and_then(|e| e.score) {
        Some(EvalScore::Cp(cp)) => cp,
        Some(EvalScore::Mate(n)) if n > 0 => MATE_CP - n,
        Some(EvalScore::Mate(n)) => -MATE_CP - n,
        None => {
            let p = f64::from(win_probability).clamp(0.001, 0.999);
            (400.0 * (p / (1.0 - p)).log10()).round() as i32
        }
    }
}

/// Checks `mv` in `game` with two short searches of `time` in all (the position, then the
/// position after `mv` if the search preferred another move).
pub fn check_book_move(
    picker: &mut dyn MovePicker,
    game: &Game,
    mv: Move,
    time: Duration,
    threads: usize,
    max_loss_cp: i32,
    stop: &AtomicBool,
) -> Verdict {
    let half = Budget {
        soft: time / 2,
        hard: time / 2,
        threads,
    };
    let Some(best) = picker.pick(game, &half, stop) else {
        return Verdict::Refused("no legal move".into());
    };
    if best.mv == mv {
        return Verdict::Safe {
            win_probability: best.win_probability,
        };
    }
    let best_cp = score_cp(picker.last_eval().as_ref(), best.win_probability);
    let mut after = game.clone();
    if after.play(mv).is_err() {
        return Verdict::Refused("not legal here".into());
    }
    if let Some(outcome) = after.outcome() {
        let us = game.position().turn();
        return match outcome.winner {
            Some(c) if c == us => Verdict::Safe {
                win_probability: 1.0,
            },
            _ => Verdict::Refused(format!("it ends the game ({outcome:?})")),
        };
    }
    if stop.load(Ordering::Relaxed) {
        return Verdict::Refused("no time left to check it".into());
    }
    let Some(reply) = picker.pick(&after, &half, stop) else {
        return Verdict::Refused("no reply found".into());
    };
    if matches!(reply.proven, Some(Proven::Win(_))) {
        return Verdict::Refused(format!("the reply {} wins by force", reply.mv));
    }
    let ours = -score_cp(picker.last_eval().as_ref(), reply.win_probability);
    if best_cp.saturating_sub(ours) > max_loss_cp {
        return Verdict::Refused(format!(
            "{ours} cp after it against {best_cp} cp after {}",
            best.mv
        ));
    }
    Verdict::Safe {
        win_probability: 1.0 - reply.win_probability,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lichess::picker::SimplePicker;
    use atomic_chess::Position;

    #[test]
    fn scores_from_the_eval_or_the_win_probability() {
        let cp = |score| EvalReport {
            score: Some(score),
            ..EvalReport::default()
        };
        assert_eq!(score_cp(Some(&cp(EvalScore::Cp(-35))), 0.9), -35);
        assert!(score_cp(Some(&cp(EvalScore::Mate(3))), 0.5) > 10_000);
        assert!(score_cp(Some(&cp(EvalScore::Mate(-3))), 0.5) < -10_000);
        assert_eq!(score_cp(None, 0.5), 0);
        assert!(score_cp(None, 0.05) < -400);
        assert!(score_cp(None, 0.0) > -1_300);
    }

    #[test]
    fn a_move_that_hangs_the_king_is_refused_and_a_sound_one_kept() {
        // After 1. Nf3 a6 2. Ng5 a5, Nxf7 explodes Black's king: the search's best, so a book
        // move that is not it scores far below it.
        let game =
            Game::from_uci_moves(Position::startpos(), &["g1f3", "a7a6", "f3g5", "a6a5"]).unwrap();
        let stop = AtomicBool::new(false);
        let mut picker = SimplePicker::default();
        let pos = game.position();
        let win = pos.parse_uci("g5f7").unwrap();
        let quiet = pos.parse_uci("h2h3").unwrap();
        let t = Duration::from_millis(10);
        assert!(matches!(
            check_book_move(&mut picker, &game, win, t, 1, 100, &stop),
            Verdict::Safe { .. }
        ));
        // Not taking the king when it can be taken: far below the search's best.
        let v = check_book_move(&mut picker, &game, quiet, t, 1, 100, &stop);
        assert!(matches!(v, Verdict::Refused(_)), "{v:?}");
        // Black to move with its king attackable: a move that lets White explode it is refused.
        let game = Game::from_uci_moves(Position::startpos(), &["g1f3", "a7a6", "f3g5"]).unwrap();
        let pos = game.position();
        let hang = pos.parse_uci("a6a5").unwrap();
        let v = check_book_move(&mut picker, &game, hang, t, 1, 10_000, &stop);
        assert!(
            matches!(v, Verdict::Refused(ref why) if why.contains("by force")),
            "{v:?}"
        );
        // The f7 pawn steps away: Nxf7 is gone.
        let defend = pos.parse_uci("f7f6").unwrap();
        let v = check_book_move(&mut picker, &game, defend, t, 1, 10_000, &stop);
        assert!(matches!(v, Verdict::Safe { .. }), "{v:?}");
    }
}
