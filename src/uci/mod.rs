//! The UCI front: a synchronous engine loop over the search.
//!
//! Standard input is read on its own thread and handed over through a channel, so `stop`,
//! `ponderhit`, `isready` and `quit` act at once while a search runs on a worker thread. End of
//! input counts as `quit`. The worker owns the [`Searcher`] during a search and hands it back
//! when it ends, so the tree survives from move to move.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use atomic_chess::{Color, Game, Position};

use crate::search::time::{ClockInput, allocate};
use crate::search::{Limits, Score, SearchInfo, Searcher};

pub mod bench;
mod options;
mod parse;

pub use options::{DEFAULT_MOVE_OVERHEAD_MS, Effect, Options};
pub use parse::{Command, Go, parse_command};

/// Where the engine writes: shared by the command loop and the search thread.
#[derive(Clone)]
pub struct Output(Arc<Mutex<Box<dyn Write + Send>>>);

impl Output {
    /// Wraps a writer (stdout in the binary, a buffer in tests).
    pub fn new(writer: Box<dyn Write + Send>) -> Output {
        Output(Arc::new(Mutex::new(writer)))
    }

    /// Writes one line and flushes, so a GUI sees it at once. Write errors (a closed pipe) are
    /// ignored: the engine then simply runs until `quit` or end of input.
    pub fn line(&self, text: &str) {
        let mut writer = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let _ = writeln!(writer, "{text}");
        let _ = writer.flush();
    }
}

/// Runs the UCI loop until `quit` or end of input.
pub fn run<R: BufRead + Send + 'static>(input: R, output: Output) {
    let (sender, receiver) = mpsc::channel::<String>();
    std::thread::Builder::new()
        .name("stdin-reader".to_string())
        .spawn(move || {
            for line in input.lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    return;
                }
            }
            let _ = sender.send("quit".to_string());
        })
        .map_or_else(
            |e| {
                output.line(&format!(
                    "info string error: cannot start the input thread: {e}"
                ));
            },
            drop,
        );
    let mut engine = Engine::new(output);
    while let Ok(line) = receiver.recv() {
        if !engine.handle(&line) {
            break;
        }
    }
    engine.finish_search();
}

/// A search running on a worker thread.
struct Job {
    handle: JoinHandle<Searcher>,
    /// Set by `stop` (and by `quit`).
    stop: Arc<AtomicBool>,
    /// Set by `ponderhit` and by `stop`: ends the pondering phase.
    ponder_end: Arc<AtomicBool>,
    /// Set by `ponderhit`: after pondering, search for real.
    ponder_hit: Arc<AtomicBool>,
}

/// The engine state between commands.
struct Engine {
    out: Output,
    options: Options,
    game: Game,
    /// `None` while a worker owns it.
    searcher: Option<Searcher>,
    job: Option<Job>,
}

impl Engine {
    fn new(out: Output) -> Engine {
        let options = Options::default();
        let searcher = Searcher::new(options.search.clone());
        Engine {
            out,
            options,
            game: Game::new(Position::startpos()),
            searcher: Some(searcher),
            job: None,
        }
    }

    /// Handles one line; returns false on `quit`.
    fn handle(&mut self, line: &str) -> bool {
        let command = match parse_command(line) {
            Ok(command) => command,
            Err(message) => {
                self.error(&message);
                return true;
            }
        };
        match command {
            Command::Uci => {
                self.out
                    .line(concat!("id name atomic-bot ", env!("CARGO_PKG_VERSION")));
                self.out.line("id author the atomic-bot developers");
                for line in self.options.describe() {
                    self.out.line(&line);
                }
                self.out.line("uciok");
            }
            Command::IsReady => {
                // Between searches only (during one the searcher is away and `isready` must
                // be answered at once): the first `go` should not make the table.
                if let Some(searcher) = self.searcher.as_mut() {
                    searcher.prepare();
                }
                self.out.line("readyok");
            }
            Command::NewGame => {
                self.finish_search();
                self.game = Game::new(Position::startpos());
                if let Some(searcher) = self.searcher.as_mut() {
                    searcher.clear();
                    searcher.prepare();
                }
            }
            Command::SetOption { name, value } => {
                self.finish_search();
                match self.options.set(&name, value.as_deref()) {
                    Ok(effect) => {
                        if let Some(searcher) = self.searcher.as_mut() {
                            searcher.set_config(self.options.search.clone());
                            searcher.set_multipv(self.options.multipv);
                            if effect == Effect::ClearTree {
                                searcher.clear();
                            }
                        }
                    }
                    Err(message) => self.error(&message),
                }
            }
            Command::Position { fen, moves } => {
                self.finish_search();
                match build_game(fen.as_deref(), &moves) {
                    Ok(game) => self.game = game,
                    Err(message) => self.error(&message),
                }
            }
            Command::Go(go) => {
                self.finish_search();
                let pos = self.game.position();
                let illegal: Vec<&str> = go
                    .searchmoves
                    .iter()
                    .filter(|m| pos.parse_uci(m).is_err())
                    .map(String::as_str)
                    .collect();
                if !illegal.is_empty() {
                    let all = illegal.len() == go.searchmoves.len();
                    self.error(&format!(
                        "go searchmoves: not legal here, ignored: {}{}",
                        illegal.join(" "),
                        if all {
                            " (every legal move is searched)"
                        } else {
                            ""
                        }
                    ));
                }
                self.start_search(go);
            }
            Command::Perft(depth) => {
                self.finish_search();
                self.perft(depth);
            }
            Command::Stop => self.finish_search(),
            Command::PonderHit => {
                if let Some(job) = &self.job {
                    job.ponder_hit.store(true, Ordering::SeqCst);
                    job.ponder_end.store(true, Ordering::SeqCst);
                }
            }
            Command::Quit => return false,
            Command::Display => {
                self.finish_search();
                let pos = self.game.position();
                for line in pos.to_string().lines() {
                    self.out.line(line);
                }
                self.out.line(&format!("Fen: {}", pos.to_fen()));
                self.out.line(&format!("Key: {:016X}", pos.zobrist()));
            }
            Command::Bench => {
                self.finish_search();
                bench::run(&self.out, &self.options.search, bench::DEFAULT_PLAYOUTS, 1);
            }
            Command::Empty => {}
        }
        true
    }

    fn error(&self, message: &str) {
        self.out.line(&format!("info string error: {message}"));
    }

    /// Stops a running search, waits for it (it prints its own `bestmove`) and takes the
    /// searcher back. Commands that change the position or the options come here first, so a
    /// GUI that forgets `stop` cannot make the engine hang.
    fn finish_search(&mut self) {
        if let Some(job) = self.job.take() {
            job.stop.store(true, Ordering::SeqCst);
            job.ponder_end.store(true, Ordering::SeqCst);
            if let Ok(searcher) = job.handle.join() {
                self.searcher = Some(searcher);
            } else {
                self.error("the search thread panicked; starting with a fresh tree");
                self.searcher = Some(Searcher::new(self.options.search.clone()));
            }
        }
    }

    fn perft(&self, depth: u32) {
        let pos = self.game.position();
        let mut total = 0;
        for (m, count) in atomic_chess::divide(pos, depth) {
            self.out.line(&format!("{m}: {count}"));
            total += count;
        }
        self.out.line("");
        self.out.line(&format!("Nodes searched: {total}"));
    }

    fn start_search(&mut self, go: Go) {
        let Some(mut searcher) = self.searcher.take() else {
            return;
        };
        let game = self.game.clone();
        let out = self.out.clone();
        let options = self.options.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let ponder_end = Arc::new(AtomicBool::new(false));
        let ponder_hit = Arc::new(AtomicBool::new(false));
        let job_stop = Arc::clone(&stop);
        let job_ponder_end = Arc::clone(&ponder_end);
        let job_ponder_hit = Arc::clone(&ponder_hit);
        let spawned = std::thread::Builder::new()
            .name("search".to_string())
            .spawn(move || {
                let mut report = |info: &SearchInfo| out.line(&format_info(info, options.show_wdl));
                if go.ponder {
                    let limits = Limits {
                        infinite: true,
                        ..Limits::default()
                    };
                    let result = searcher.search(&game, &limits, &job_ponder_end, &mut report);
                    if !job_ponder_hit.load(Ordering::SeqCst) || job_stop.load(Ordering::SeqCst) {
                        out.line(&format_bestmove(result.best_move, result.ponder_move));
                        return searcher;
                    }
                }
                // The clock starts now (after a ponderhit, too): the tree from pondering is reused.
                let limits = limits_for(&go, &game, &options);
                let result = searcher.search(&game, &limits, &job_stop, &mut report);
                out.line(&format_bestmove(result.best_move, result.ponder_move));
                searcher
            });
        match spawned {
            Ok(handle) => {
                self.job = Some(Job {
                    handle,
                    stop,
                    ponder_end,
                    ponder_hit,
                });
            }
            Err(e) => {
                self.error(&format!("cannot start the search thread: {e}"));
                self.searcher = Some(Searcher::new(self.options.search.clone()));
            }
        }
    }
}

/// Builds the game of a `position` command. `Err` names the bad FEN or the bad move.
pub fn build_game(fen: Option<&str>, moves: &[String]) -> Result<Game, String> {
    let start = match fen {
        None => Position::startpos(),
        Some(fen) => Position::from_fen(fen).map_err(|e| format!("bad FEN '{fen}': {e}"))?,
    };
    Game::from_uci_moves(start, moves).map_err(|e| format!("bad move in position: {e}"))
}

/// Turns `go` parameters into search limits.
pub fn limits_for(go: &Go, game: &Game, options: &Options) -> Limits {
    let pos = game.position();
    let mut limits = Limits {
        nodes: go.nodes,
        depth: go.depth,
        mate: go.mate,
        infinite: go.infinite,
        searchmoves: go
            .searchmoves
            .iter()
            .filter_map(|m| pos.parse_uci(m).ok())
            .collect(),
        ..Limits::default()
    };
    if let Some(movetime) = go.movetime {
        // A fixed time per move: keep the overhead out of it, but never more than half.
        let margin = options.move_overhead.min(movetime / 2);
        limits.hard = Some(movetime - margin);
    }
    let (clock, increment) = match pos.turn() {
        Color::White => (go.wtime, go.winc),
        Color::Black => (go.btime, go.binc),
    };
    if let Some(remaining) = clock {
        let ply =
            (pos.fullmove_number().saturating_sub(1)) * 2 + u32::from(pos.turn() == Color::Black);
        let time = allocate(&ClockInput {
            remaining,
            increment: increment.unwrap_or_default(),
            moves_to_go: go.movestogo,
            ply,
            move_overhead: options.move_overhead,
            cap: None,
        });
        limits.soft = Some(limits.soft.map_or(time.soft, |s| s.min(time.soft)));
        limits.hard = Some(limits.hard.map_or(time.hard, |h| h.min(time.hard)));
    }
    limits
}

/// One `info` line.
pub fn format_info(info: &SearchInfo, show_wdl: bool) -> String {
    let score = match info.score {
        Score::Cp(cp) => format!("cp {cp}"),
        Score::Mate(n) => format!("mate {n}"),
    };
    let mut line = format!(
        "info depth {} seldepth {} multipv {} score {}",
        info.depth, info.seldepth, info.multipv, score
    );
    if show_wdl {
        let (w, d, l) = info.wdl;
        line.push_str(&format!(" wdl {w} {d} {l}"));
    }
    line.push_str(&format!(
        " nodes {} nps {} hashfull {} time {}",
        info.nodes,
        info.nps,
        info.hashfull,
        info.time.as_millis()
    ));
    if !info.pv.is_empty() {
        line.push_str(" pv");
        for m in &info.pv {
            line.push_str(&format!(" {m}"));
        }
    }
    line
}

/// The `bestmove` line; `0000` when there is no legal move (UCI convention).
pub fn format_bestmove(
    best: Option<atomic_chess::Move>,
    ponder: Option<atomic_chess::Move>,
) -> String {
    match (best, ponder) {
        (Some(best), Some(ponder)) => format!("bestmove {best} ponder {ponder}"),
        (Some(best), None) => format!("bestmove {best}"),
        (None, _) => "bestmove 0000".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn movetime_keeps_the_overhead_out() {
        let options = Options::default();
        let game = Game::new(Position::startpos());
        let go = Go {
            movetime: Some(ms(1000)),
            ..Go::default()
        };
        let limits = limits_for(&go, &game, &options);
        assert_eq!(limits.hard, Some(ms(1000) - options.move_overhead));
        assert_eq!(limits.soft, None);
        let go = Go {
            movetime: Some(ms(20)),
            ..Go::default()
        };
        assert_eq!(limits_for(&go, &game, &options).hard, Some(ms(10)));
    }

    #[test]
    fn clocks_of_the_side_to_move_are_used() {
        let options = Options::default();
        let go = Go {
            wtime: Some(ms(60_000)),
            btime: Some(ms(1_000)),
            ..Go::default()
        };
        let white = limits_for(&go, &Game::new(Position::startpos()), &options);
        let black = limits_for(
            &go,
            &build_game(None, &["e2e3".to_string()]).expect("legal"),
            &options,
        );
        assert!(white.hard.expect("hard") > black.hard.expect("hard"));
        assert!(black.hard.expect("hard") < ms(1_000));
    }

    #[test]
    fn nodes_depth_mate_infinite_pass_through() {
        let go = Go {
            nodes: Some(5),
            depth: Some(3),
            mate: Some(2),
            infinite: true,
            ..Go::default()
        };
        let limits = limits_for(&go, &Game::new(Position::startpos()), &Options::default());
        assert_eq!(
            (limits.nodes, limits.depth, limits.mate, limits.infinite),
            (Some(5), Some(3), Some(2), true)
        );
        assert_eq!(limits.hard, None);
    }

    #[test]
    fn bestmove_and_info_format() {
        let game = build_game(None, &["e2e4".to_string()]).expect("legal");
        let m = game.position().parse_uci("e7e5").ok();
        assert_eq!(format_bestmove(m, None), "bestmove e7e5");
        assert_eq!(format_bestmove(None, None), "bestmove 0000");
        let info = SearchInfo {
            depth: 3,
            seldepth: 7,
            nodes: 100,
            nps: 1000,
            time: ms(100),
            score: Score::Mate(-2),
            wdl: (0, 0, 1000),
            pv: m.into_iter().collect(),
            hashfull: 5,
            multipv: 1,
        };
        assert_eq!(
            format_info(&info, true),
            "info depth 3 seldepth 7 multipv 1 score mate -2 wdl 0 0 1000 nodes 100 nps 1000 hashfull 5 time 100 pv e7e5"
        );
    }

    #[test]
    fn bad_position_is_an_error() {
        assert!(build_game(Some("8/8/8"), &[]).is_err());
        assert!(build_game(None, &["e2e5".to_string()]).is_err());
        assert!(build_game(None, &["e1h1".to_string()]).is_err());
    }
}
