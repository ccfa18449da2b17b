//! `atomic-bot fake-lichess`: the fake server as a process, with one bot account, for scripts
//! that run the real binary against it (the container smoke test, `.ci/docker-smoke.sh`).
//!
//! It listens (port 0 picks a free one), writes the port to `--port-file` once it accepts
//! connections, logs every request to standard error (never the token), and stops on
//! SIGTERM/SIGINT. Everything else is the in-process server's: streams with keep-alives, games,
//! challenges.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::{FakeAccount, FakeConfig, FakeLichess};

/// Arguments of `atomic-bot fake-lichess`.
#[derive(clap::Args, Debug)]
pub struct FakeLichessArgs {
    /// Address to listen on; port 0 takes a free port (see --port-file).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Write the port to this file once the server accepts connections.
    #[arg(long)]
    pub port_file: Option<PathBuf>,
    /// Username of the one account, a BOT account.
    #[arg(long, default_value = "FakeBot")]
    pub bot: String,
    /// The account's bearer token (the bot reads the same variable).
    #[arg(long, env = "LICHESS_BOT_TOKEN", hide_env_values = true)]
    pub token: String,
    /// Keep-alive period of the streams in milliseconds (lichess: 6000-7000).
    #[arg(long, default_value_t = 6000, value_parser = clap::value_parser!(u64).range(1..))]
    pub keepalive_ms: u64,
}

/// Logs every request to standard error (the request log's debug lines; `RUST_LOG` may ask
/// for more or less). For the process only: tests keep their output.
pub fn log_requests() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "atomic_bot::fakelichess=debug".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Serves until `stop` is cancelled; exit 0, or 1 when it cannot listen or write the port.
pub async fn serve(args: FakeLichessArgs, stop: CancellationToken) -> ExitCode {
    let listener = match TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fake-lichess: cannot listen on {}: {e}", args.listen);
            return ExitCode::FAILURE;
        }
    };
    let config = FakeConfig {
        accounts: vec![FakeAccount::new(&args.bot, &args.token, true)],
        keepalive: Duration::from_millis(args.keepalive_ms),
        ..FakeConfig::default()
    };
    let fake = match FakeLichess::start_on(listener, config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fake-lichess: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let url = fake.url();
    if let Some(path) = &args.port_file {
        let port = url.rsplit(':').next().unwrap_or_default();
        if let Err(e) = write_whole(path, port) {
            eprintln!("fake-lichess: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    println!("fake lichess listening on {url} (account {})", args.bot);
    stop.cancelled().await;
    fake.stop();
    ExitCode::SUCCESS
}

/// Writes `text` to `path` through a temporary file and a rename, so that a reader never sees
/// it half written.
fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn serves_the_bot_account_and_writes_the_port() {
        let dir = tempfile::tempdir().unwrap();
        let port_file = dir.path().join("port");
        let args = FakeLichessArgs {
            listen: "127.0.0.1:0".parse().unwrap(),
            port_file: Some(port_file.clone()),
            bot: "SmokeBot".into(),
            token: "tok_smoke".into(),
            keepalive_ms: 100,
        };
        let stop = CancellationToken::new();
        let server = tokio::spawn(serve(args, stop.clone()));
        let mut port = String::new();
        for _ in 0..100 {
            if let Ok(p) = std::fs::read_to_string(&port_file) {
                port = p;
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let port: u16 = port.parse().expect("a port in the port file");
        let http = reqwest::Client::new();
        let url = |p: &str| format!("http://127.0.0.1:{port}{p}");
        let account = http
            .get(url("/api/account"))
            .bearer_auth("tok_smoke")
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        let account: serde_json::Value = serde_json::from_slice(&account).unwrap();
        assert_eq!(account["id"], "smokebot");
        assert_eq!(account["title"], "BOT");
        let mut events = http
            .get(url("/api/stream/event"))
            .bearer_auth("tok_smoke")
            .send()
            .await
            .unwrap();
        assert_eq!(events.status(), 200);
        // A keep-alive within a few periods.
        let chunk = tokio::time::timeout(Duration::from_secs(5), events.chunk())
            .await
            .expect("a keep-alive")
            .unwrap();
        assert_eq!(chunk.as_deref(), Some(&b"\n"[..]));
        stop.cancel();
        let code = tokio::time::timeout(Duration::from_secs(5), server)
            .await
            .expect("stops on the token")
            .unwrap();
        assert_eq!(code, ExitCode::SUCCESS);
    }

    #[tokio::test]
    async fn a_taken_address_is_an_error_naming_it() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let args = FakeLichessArgs {
            listen: taken.local_addr().unwrap(),
            port_file: None,
            bot: "SmokeBot".into(),
            token: "t".into(),
            keepalive_ms: 1000,
        };
        let code = serve(args, CancellationToken::new()).await;
        assert_eq!(code, ExitCode::FAILURE);
    }
}
