//! Appends the engine's evaluations to each row of a labelled CSV, for comparing them with
//! Fairy-Stockfish's scores (`scripts/eval_agreement.py`).
//!
//! Reads a CSV whose first column is a FEN and whose first line is a header (`labelled.csv`,
//! `data/eval-games-fsf20k.csv.gz` unpacked) and prints every data row followed by two
//! columns: the static evaluation and the leaf quiescence search's value, both in centipawns
//! from the side to move's view, with the compiled-in weights and default search parameters
//! (0 for a position without moves; the labelled files hold none). A row whose FEN does not
//! parse is reported on standard error and skipped.
//!
//! ```sh
//! cargo run --profile tune --example eval_csv -- ../shared/atomic/labelled.csv > evals.csv
//! python3 scripts/eval_agreement.py evals.csv
//! ```

use std::io::{BufRead, BufWriter, Write};

use atomic_bot::search::SearchParams;
use atomic_bot::search::eval::{QStats, qsearch_root, static_eval};
use atomic_chess::Position;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: eval_csv <labelled.csv>")?;
    let input = std::io::BufReader::new(std::fs::File::open(&path)?);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let params = SearchParams::default();
    for (number, line) in input.lines().enumerate().skip(1) {
        let line = line?;
        let fen = line.split(',').next().unwrap_or_default();
        let pos = match Position::from_fen(fen) {
            Ok(pos) => pos,
            Err(err) => {
                eprintln!("{path}:{}: {err}", number + 1);
                continue;
            }
        };
        let moves = pos.legal_moves();
        let quiescence = if moves.is_empty() {
            0
        } else {
            qsearch_root(&pos, &moves, &params, &mut QStats::default())
        };
        writeln!(out, "{line},{},{quiescence}", static_eval(&pos))?;
    }
    out.flush()?;
    Ok(())
}
