//! `atomic-bot datagen`: training positions for the evaluation network from self-play of our
//! own search (issue #30's first generation learns from the current engine; each stronger
//! network then generates the data for the next).
//!
//! Games are numbered; worker threads take the next number and play that game
//! ([`selfplay::play`]); a writer puts the games into the file in number order. The file is
//! therefore the same for a seed, a game count and a node budget however many threads played
//! it, and a run can be extended by another with `--first-game` where the last one stopped.

pub mod record;
pub mod selfplay;

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use clap::Args;

use crate::search::nnue::{Network, NetworkError, embedded};
use crate::search::{SearchConfig, Searcher};
use selfplay::{PlayRules, Played};

/// Arguments of `atomic-bot datagen`.
#[derive(Args, Debug, Clone)]
pub struct DatagenArgs {
    /// The file to write (replaced): a header and 32-byte records (`src/datagen/record.rs`).
    #[arg(long)]
    pub out: PathBuf,
    /// Games to play.
    #[arg(long, default_value_t = 1000)]
    pub games: u64,
    /// The number of the first game (a run continuing another with the same seed starts
    /// where that one stopped).
    #[arg(long, default_value_t = 0)]
    pub first_game: u64,
    /// Seed of the random opening plies.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Nodes per move.
    #[arg(long, default_value_t = 5_000)]
    pub nodes: u64,
    /// Random plies from the start position before the engine plays (this many or one more).
    #[arg(long, default_value_t = 8)]
    pub random_plies: u32,
    /// Adjudicate a win once both sides' scores agree beyond this many centipawns for 4 plies
    /// (gen0: 2 500; higher keeps more won endings and king hunts in the data, as the game is
    /// played on until a mate score or the end).
    #[arg(long, default_value_t = PlayRules::default().win_cp)]
    pub win_cp: i32,
    /// Games played at once, one search thread each (default: every core this process may use).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Transposition table per game in MiB.
    #[arg(long, default_value_t = 16)]
    pub hash: usize,
    /// The evaluation of the playing engine: `<embedded>` (the network built in; each
    /// generation's network makes the next one's data), `<linear>` (what made gen0) or a
    /// network file.
    #[arg(long, default_value = "<embedded>")]
    pub eval_file: String,
}

/// Why a run failed.
#[derive(Debug)]
pub enum DatagenError {
    /// Nonsensical arguments.
    Usage(String),
    /// The network file did not load.
    Network(NetworkError),
    /// The output file could not be written.
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for DatagenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatagenError::Usage(why) => write!(f, "datagen: {why}"),
            DatagenError::Network(e) => write!(f, "datagen: --eval-file: {e}"),
            DatagenError::Io(path, e) => write!(f, "datagen: cannot write {}: {e}", path.display()),
        }
    }
}

impl std::error::Error for DatagenError {}

/// What a run produced, for the final report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Games played.
    pub games: u64,
    /// Positions written.
    pub positions: u64,
    /// Positions searched (written or not).
    pub searched: u64,
    /// White wins, draws, Black wins.
    pub results: [u64; 3],
    /// Wall time.
    pub elapsed: Duration,
    /// Threads that played.
    pub threads: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let per_core = self.positions as f64 / secs / self.threads.max(1) as f64;
        write!(
            f,
            "{} games (+{} ={} -{} for White), {} positions written of {} searched, {:.1} s, \
             {:.0} positions/s, {:.0} positions/s per thread ({} threads)",
            self.games,
            self.results[0],
            self.results[1],
            self.results[2],
            self.positions,
            self.searched,
            secs,
            self.positions as f64 / secs,
            per_core,
            self.threads,
        )
    }
}

/// Runs `atomic-bot datagen`, printing progress to stderr every `progress` (if any).
pub fn run(args: &DatagenArgs, progress: Option<Duration>) -> Result<Summary, DatagenError> {
    if args.games == 0 || args.nodes == 0 {
        return Err(DatagenError::Usage(
            "--games and --nodes must be at least 1".into(),
        ));
    }
    if args.win_cp < 100 {
        return Err(DatagenError::Usage(format!(
            "--win-cp {} would adjudicate balanced games as wins: give at least 100",
            args.win_cp
        )));
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .max(1);
    let network = match args.eval_file.as_str() {
        embedded::NAME => Some(embedded::network()),
        embedded::LINEAR => None,
        path => Some(Arc::new(
            Network::load(Path::new(path)).map_err(DatagenError::Network)?,
        )),
    };
    let io = |e| DatagenError::Io(args.out.clone(), e);
    let mut out = BufWriter::new(File::create(&args.out).map_err(io)?);
    out.write_all(&record::header()).map_err(io)?;
    let rules = PlayRules {
        nodes: args.nodes,
        random_plies: args.random_plies,
        win_cp: args.win_cp,
        ..PlayRules::default()
    };
    let config = SearchConfig {
        hash_mb: args.hash.max(1),
        network,
        ..SearchConfig::default()
    };
    let next = AtomicU64::new(args.first_game);
    let end = args.first_game + args.games;
    let started = Instant::now();
    let (send, receive) = mpsc::sync_channel::<(u64, Played)>(threads * 4);
    let mut summary = Summary {
        threads,
        ..Summary::default()
    };
    let written = std::thread::scope(|scope| {
        for _ in 0..threads {
            let send = send.clone();
            let next = &next;
            let config = config.clone();
            scope.spawn(move || {
                let mut searcher = Searcher::new(config);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= end {
                        break;
                    }
                    let played = selfplay::play(&mut searcher, &rules, args.seed, index);
                    if send.send((index, played)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(send);
        // Games arrive in any order; they are written in number order.
        let mut waiting = BTreeMap::new();
        let mut want = args.first_game;
        let mut last_report = Instant::now();
        for (index, played) in receive {
            waiting.insert(index, played);
            while let Some(played) = waiting.remove(&want) {
                for rec in &played.records {
                    out.write_all(rec)?;
                }
                summary.games += 1;
                summary.positions += played.records.len() as u64;
                summary.searched += played.searched;
                let slot = match played.white {
                    1 => 0,
                    0 => 1,
                    _ => 2,
                };
                summary.results[slot] += 1;
                want += 1;
            }
            if let Some(every) = progress
                && last_report.elapsed() >= every
            {
                last_report = Instant::now();
                summary.elapsed = started.elapsed();
                eprintln!("datagen: {summary}");
            }
        }
        out.flush()
    });
    written.map_err(io)?;
    summary.elapsed = started.elapsed();
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(out: PathBuf, threads: usize) -> DatagenArgs {
        DatagenArgs {
            out,
            games: 4,
            first_game: 0,
            seed: 5,
            nodes: 200,
            random_plies: 8,
            win_cp: 2_500,
            threads: Some(threads),
            hash: 2,
            eval_file: embedded::LINEAR.to_owned(),
        }
    }

    #[test]
    fn the_file_is_the_same_for_one_thread_or_two_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("atomic-datagen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let one = dir.join("one.bin");
        let two = dir.join("two.bin");
        let a = run(&args(one.clone(), 1), None).expect("runs");
        let b = run(&args(two.clone(), 2), None).expect("runs");
        let bytes = std::fs::read(&one).expect("written");
        assert_eq!(bytes, std::fs::read(&two).expect("written"));
        let body = record::records(&bytes).expect("a valid file");
        assert_eq!(body.len() as u64, a.positions * record::RECORD_BYTES as u64);
        assert_eq!((a.games, a.positions), (b.games, b.positions));
        assert_eq!(a.results.iter().sum::<u64>(), 4);
        for rec in body.chunks_exact(record::RECORD_BYTES) {
            record::decode(rec).expect("every record decodes");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_higher_win_threshold_plays_the_same_games_further() {
        let dir = std::env::temp_dir().join(format!("atomic-datagen-win-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut low = args(dir.join("low.bin"), 2);
        low.games = 8;
        low.win_cp = 300;
        let mut high = args(dir.join("high.bin"), 2);
        high.games = 8;
        let (a, b) = (
            run(&low, None).expect("runs"),
            run(&high, None).expect("runs"),
        );
        // The same games (deterministic) up to the adjudication, which comes later or not at
        // all: more plies searched and kept.
        assert!(b.searched > a.searched, "{a} / {b}");
        assert!(b.positions > a.positions, "{a} / {b}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn zero_games_or_nodes_is_a_usage_error() {
        let mut bad = args(PathBuf::from("/nonexistent/x.bin"), 1);
        bad.games = 0;
        assert!(matches!(run(&bad, None), Err(DatagenError::Usage(_))));
        let unwritable = args(PathBuf::from("/nonexistent/dir/x.bin"), 1);
        let err = run(&unwritable, None).expect_err("cannot create");
        assert!(err.to_string().contains("/nonexistent/dir/x.bin"), "{err}");
        let mut low_win = args(std::env::temp_dir().join("atomic-datagen-unused.bin"), 1);
        low_win.win_cp = 50;
        let err = run(&low_win, None).expect_err("a win threshold inside the balanced range");
        assert!(err.to_string().contains("--win-cp 50"), "{err}");
        let mut no_net = args(std::env::temp_dir().join("atomic-datagen-unused.bin"), 1);
        no_net.eval_file = "/no/such/net.nnue".into();
        let err = run(&no_net, None).expect_err("no network");
        assert!(err.to_string().contains("/no/such/net.nnue"), "{err}");
    }
}
