//! `atomic-bot balanced` and `atomic-bot demo --balanced [PAWN]`.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use super::Removal;
use super::ranking::{self, Budget, Ranked};
use crate::lichess::app::{self, DemoArgs};
use crate::search::SearchConfig;

/// The nodes per start of the ranking that picks the demo's start (one thread): the same choice
/// on every machine under any load, 16 starts in about 3 s on a free core. Measured
/// (docs/BOT.md, "The Balanced start"): white d2 comes first at 100 000 and 300 000 nodes and at
/// 1 s a start, and second at 1 and 3 million nodes (behind white e2, then black c7, by 13-35 cp:
/// the top three are within the search's noise).
pub const DEMO_NODES: u64 = 100_000;

/// `atomic-bot balanced`.
#[derive(Clone, Debug, clap::Args)]
pub struct BalancedArgs {
    /// Search time per start in milliseconds (16 starts are searched). Default: 1000, unless
    /// --nodes is given.
    #[arg(long, conflicts_with = "nodes", value_parser = clap::value_parser!(u64).range(1..))]
    pub movetime: Option<u64>,
    /// Search each start for this many nodes instead of a time (on one thread the ranking is
    /// then the same on every machine and under any load).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub nodes: Option<u64>,
    /// Search threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=256))]
    pub threads: u64,
    /// Transposition table size in MiB (cleared before each start).
    #[arg(long, default_value_t = 128, value_parser = clap::value_parser!(u64).range(1..=65536))]
    pub hash: u64,
}

/// The default engine's configuration with the command's resources.
fn config(threads: u64, hash_mb: u64) -> SearchConfig {
    SearchConfig {
        threads: usize::try_from(threads).unwrap_or(1),
        hash_mb: usize::try_from(hash_mb).unwrap_or(128),
        ..SearchConfig::default()
    }
}

impl BalancedArgs {
    /// The search limit per start: `--nodes`, else `--movetime` (default 1 s).
    pub fn budget(&self) -> Budget {
        match self.nodes {
            Some(n) => Budget::Nodes(n),
            None => Budget::Time(Duration::from_millis(self.movetime.unwrap_or(1000))),
        }
    }
}

/// Prints one searched start as it is done (the whole run takes 16 × the movetime).
fn progress(r: &Ranked) {
    eprintln!(
        "searched {:<8}  {:>10}  reply {}  depth {}",
        r.removal.to_string(),
        ranking::describe(r.white),
        r.reply.map_or("-".to_owned(), |m| m.to_string()),
        r.depth
    );
}

/// `atomic-bot balanced`: searches the 16 starts and prints them ranked for White.
pub fn run(args: &BalancedArgs) -> ExitCode {
    let config = config(args.threads, args.hash);
    let budget = args.budget();
    println!(
        "The vchess Balanced start: White removes one pawn, then Black moves first.\n\
         Each of the 16 starts searched for {budget} ({}, {} thread(s)); best for White first.\n",
        config.algorithm.name(),
        config.threads
    );
    let _ = std::io::stdout().flush();
    let ranked = ranking::rank(&config, budget, &mut progress);
    print!("{}", ranking::render(&ranked));
    ExitCode::SUCCESS
}

/// What `--balanced` asks for: a named pawn, or (no value) White's best choice.
pub fn demo_removal(choice: &str) -> Result<Option<Removal>, String> {
    if choice.is_empty() {
        Ok(None)
    } else {
        choice.parse().map(Some)
    }
}

/// `atomic-bot demo --balanced [PAWN]`: the demo game from a Balanced start, the named pawn's
/// or, by default, White's best by the ranking at [`DEMO_NODES`] a start.
pub fn demo(args: DemoArgs) -> ExitCode {
    let choice = args.balanced.clone().unwrap_or_default();
    let removal = match demo_removal(&choice) {
        Ok(Some(r)) => {
            println!("Balanced start: {r} removed (as asked).");
            r
        }
        Ok(None) => {
            println!(
                "Balanced start: ranking the 16 starts at {DEMO_NODES} nodes each for \
                 White's best removal..."
            );
            let _ = std::io::stdout().flush();
            let ranked = ranking::rank(&config(1, 128), Budget::Nodes(DEMO_NODES), &mut |_| {});
            print!("{}", ranking::render(&ranked));
            let Some(best) = ranked.first() else {
                eprintln!("atomic-bot: no Balanced start was searched");
                return ExitCode::FAILURE;
            };
            println!(
                "Balanced start: {} removed (White's best, {}).",
                best.removal,
                ranking::describe(best.white)
            );
            best.removal
        }
        Err(e) => {
            eprintln!("atomic-bot: demo --balanced: {e}");
            return ExitCode::from(2);
        }
    };
    println!("FEN: {}\n", removal.fen());
    let _ = std::io::stdout().flush();
    app::demo(args, Some(removal.fen()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_takes_a_named_pawn_or_whites_best() {
        assert_eq!(demo_removal(""), Ok(None));
        assert_eq!(
            demo_removal("d2").map(|r| r.map(|r| r.to_string())),
            Ok(Some("white d2".into()))
        );
        let err = demo_removal("e5").unwrap_err();
        assert!(err.contains("\"e5\""), "{err}");
    }

    #[test]
    fn the_cli_reads_its_options_and_refuses_zero() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            args: BalancedArgs,
        }
        let args = Cli::try_parse_from(["balanced", "--movetime", "50", "--threads", "2"])
            .unwrap()
            .args;
        assert_eq!((args.threads, args.hash), (2, 128));
        assert_eq!(args.budget(), Budget::Time(Duration::from_millis(50)));
        let default = Cli::try_parse_from(["balanced"]).unwrap().args;
        assert_eq!(default.budget(), Budget::Time(Duration::from_secs(1)));
        let nodes = Cli::try_parse_from(["balanced", "--nodes", "5000"])
            .unwrap()
            .args;
        assert_eq!(nodes.budget(), Budget::Nodes(5000));
        assert!(Cli::try_parse_from(["balanced", "--nodes", "5", "--movetime", "5"]).is_err());
        assert!(Cli::try_parse_from(["balanced", "--movetime", "0"]).is_err());
        assert!(Cli::try_parse_from(["balanced", "--threads", "0"]).is_err());
    }
}
