//! Tests of the `atomic-bot` binary against the fake server: signals, exit codes, and the
//! token never appearing in the logs (trace level, captured).

mod common;

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use atomic_bot::fakelichess::ChallengeSpec;
use atomic_bot::lichess::client::Endpoint;
use common::*;

fn bot_command(url: &str, token: &str, dir: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_atomic-bot"));
    c.arg("lichess")
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("LICHESS_BOT_TOKEN", token)
        .env("ATOMIC_BOT_LICHESS__URL", url)
        .env("ATOMIC_BOT_LICHESS__RECONNECT_MIN_MS", "50")
        .env("ATOMIC_BOT_GAME__PONDER", "false")
        .env("ATOMIC_BOT_SEARCH__ENGINE", "simple")
        // In the test's own directory, not the shared default /tmp/atomic-bot.heartbeat.
        .env("ATOMIC_BOT_HEARTBEAT__PATH", dir.join("heartbeat"))
        .env("RUST_LOG", "trace")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Collects a child's stdout+stderr on threads (trace logs would fill a pipe).
fn capture(child: &mut Child) -> Vec<std::thread::JoinHandle<String>> {
    let mut out = Vec::new();
    if let Some(mut s) = child.stdout.take() {
        out.push(std::thread::spawn(move || {
            let mut v = String::new();
            let _ = s.read_to_string(&mut v);
            v
        }));
    }
    if let Some(mut s) = child.stderr.take() {
        out.push(std::thread::spawn(move || {
            let mut v = String::new();
            let _ = s.read_to_string(&mut v);
            v
        }));
    }
    out
}

/// Runs `c` to its exit (at most `limit`); returns its exit code and its whole output.
fn run_to_exit(mut c: Command, limit: Duration) -> (Option<i32>, String) {
    let mut child = c.spawn().unwrap();
    let logs = capture(&mut child);
    let status = tokio::task::block_in_place(|| wait_exit(&mut child, limit)).expect("exits");
    let text = logs.into_iter().map(|h| h.join().unwrap()).collect();
    (status.code(), text)
}

fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    None
}

/// Sends SIGTERM straight through libc, so the test needs no `kill` binary on the machine.
fn term(child: &Child) {
    let pid = libc::pid_t::try_from(child.id()).expect("pid fits pid_t");
    // SAFETY: kill(2) only reads its two integer arguments; the pid is our own live child.
    let rc = unsafe { libc::kill(pid, libc::SIGTERM) };
    assert_eq!(rc, 0, "kill(SIGTERM) failed");
}

/// A fresh working directory for the bot, removed when dropped (also if the test fails).
fn tempdir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("atomic-bot-{name}-"))
        .tempdir()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plays_a_game_then_sigterm_while_idle_exits_0_within_5s_and_never_logs_the_token() {
    let fake = fake().await;
    let dir = tempdir("sigterm");
    let mut child = bot_command(&fake.url(), BOT_TOKEN, dir.path())
        .spawn()
        .unwrap();
    let logs = capture(&mut child);
    wait_connected(&fake, 1).await;
    // A whole game first, so the logs cover every request kind.
    let id = fake
        .challenge(HUMAN, BOT, &ChallengeSpec::default())
        .unwrap();
    assert!(
        fake.wait_until(Duration::from_secs(20), |f| f.game(&id).is_some())
            .await
    );
    let opp = opponent(&fake.url(), HUMAN_TOKEN, &id).await;
    let g = fake
        .wait_game_over(&id, Duration::from_secs(60))
        .await
        .expect("game over");
    assert_ne!(g.status, "aborted");
    let _ = opp.await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Idle now: SIGTERM.
    let t = Instant::now();
    term(&child);
    let status = tokio::task::block_in_place(|| wait_exit(&mut child, Duration::from_secs(5)))
        .expect("did not exit within 5 s");
    assert!(status.success(), "{status:?}");
    assert!(t.elapsed() < Duration::from_secs(5));
    let text: String = logs.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        text.contains("game over"),
        "logs not captured: {}",
        &text[..text.len().min(2000)]
    );
    assert!(!text.contains(BOT_TOKEN), "the token leaked into the logs");
    assert!(!text.contains("SECRET123"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_token_exits_1_with_a_clear_message_without_the_token() {
    let fake = fake().await;
    let dir = tempdir("401");
    let token = "lip_wrongtoken_SECRET999";
    let (code, text) = run_to_exit(
        bot_command(&fake.url(), token, dir.path()),
        Duration::from_secs(20),
    );
    assert_eq!(code, Some(1));
    assert!(text.contains("401"), "{text}");
    assert!(text.contains("LICHESS_BOT_TOKEN"), "{text}");
    assert!(!text.contains(token));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_configuration_exits_2_naming_the_key() {
    let dir = tempdir("badcfg");
    let mut c = bot_command("http://127.0.0.1:9", BOT_TOKEN, dir.path());
    c.env("ATOMIC_BOT_CHALLENGE__MAX_GAMES", "lots");
    let (code, text) = run_to_exit(c, Duration::from_secs(10));
    assert_eq!(code, Some(2));
    assert!(text.contains("max_games"), "{text}");
    // No token at all.
    let mut c = bot_command("http://127.0.0.1:9", "", dir.path());
    c.env_remove("LICHESS_BOT_TOKEN");
    let (code, text) = run_to_exit(c, Duration::from_secs(10));
    assert_eq!(code, Some(2));
    assert!(text.contains("LICHESS_BOT_TOKEN"), "{text}");
}

#[test]
fn demo_plays_a_game_offline_and_prints_the_pgn() {
    let dir = tempdir("demo");
    let out = Command::new(env!("CARGO_BIN_EXE_atomic-bot"))
        .args(["demo", "--clock", "0.5+1", "--engine", "simple"])
        .current_dir(dir.path())
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Result: "), "{text}");
    assert!(text.contains("[Variant \"Atomic\"]"), "{text}");
    assert!(text.contains("[TimeControl \"30+1\"]"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrade_needs_the_confirmation_flag() {
    let fake = fake().await;
    let dir = tempdir("upgrade");
    let run = |confirm: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_atomic-bot"));
        c.arg("upgrade")
            .current_dir(dir.path())
            .env_clear()
            .env("LICHESS_BOT_TOKEN", "lip_notabot")
            .env("ATOMIC_BOT_LICHESS__URL", fake.url())
            .env("ATOMIC_BOT_HEARTBEAT__PATH", dir.path().join("heartbeat"));
        if confirm {
            c.arg("--confirm");
        }
        c.output().unwrap()
    };
    let out = tokio::task::block_in_place(|| run(false));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--confirm"));
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| r.endpoint == Some(Endpoint::Upgrade))
    );
    let out = tokio::task::block_in_place(|| run(true));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("is now a BOT account"));
    let out = tokio::task::block_in_place(|| run(true));
    assert!(String::from_utf8_lossy(&out.stdout).contains("already a BOT account"));
}
