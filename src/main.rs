//! The `atomic-bot` binary: a thin clap front over the library.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use atomic_bot::lichess::app;

#[derive(Parser)]
#[command(
    name = "atomic-bot",
    version,
    about = "An Atomic chess engine and lichess bot"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Play on lichess as a bot (token from LICHESS_BOT_TOKEN or lichess.token_file).
    Lichess(app::LichessArgs),
    /// Play one game offline against a built-in opponent on a local lichess-compatible server.
    Demo(app::DemoArgs),
    /// Upgrade the lichess account to a BOT account (irreversible; needs --confirm).
    Upgrade(app::UpgradeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Lichess(args)) => app::lichess(args),
        Some(Command::Demo(args)) => app::demo(args),
        Some(Command::Upgrade(args)) => app::upgrade(args),
        None => ExitCode::SUCCESS,
    }
}
