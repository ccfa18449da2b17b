//! Bot benchmark (`cargo bench --bench lichess_bot`; running the built file directly needs the
//! `--bench` argument): the `atomic-bot lichess` binary plays
//! rounds of 8 concurrent games against the local fake server; opponents play through the API
//! from this process.
//!
//! Reports:
//! - turn overhead: from reading the `gameState` line that makes it our turn to the move request
//!   leaving, minus the think time (the bot logs it per move as `overhead_us`);
//! - the bot process's RSS while 8 games run (sampled from /proc, plus VmHWM at the end).
//!
//! Options (environment): `BENCH_ROUNDS` (default 2), `BENCH_GAMES` (default 8),
//! `BENCH_OPP_THINK_MS` (opponent think per move, default 30), `BENCH_ENGINE` (the bot's
//! `search.engine`, default `mcts`), `BENCH_CLOCK` (lichess's `minutes+increment`, default `0.5+0`).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atomic_bot::config::Settings;
use atomic_bot::fakelichess::{ChallengeSpec, FakeAccount, FakeConfig, FakeLichess};
use atomic_bot::lichess::client::LichessClient;
use atomic_bot::lichess::game::{GameContext, Metrics, play_game};
use atomic_bot::lichess::picker::{Budget, MovePicker, Pick, PickerFactory, SimplePicker};
use atomic_chess::Game;
use secrecy::SecretString;
use tokio_util::sync::CancellationToken;

struct SlowPicker(SimplePicker, Duration);

impl MovePicker for SlowPicker {
    fn pick(&mut self, game: &Game, budget: &Budget, stop: &AtomicBool) -> Option<Pick> {
        std::thread::sleep(self.1);
        self.0.pick(game, budget, stop)
    }
}

struct SlowFactory(Duration, AtomicUsize);

impl PickerFactory for SlowFactory {
    fn create(&self, _hash_mb: u64) -> Box<dyn MovePicker> {
        let n = self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed) as u64;
        Box::new(SlowPicker(SimplePicker { seed: n * 7919 + 3 }, self.0))
    }
}

fn env_num(k: &str, d: u64) -> u64 {
    std::env::var(k)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(d)
}

fn rss_kb(pid: u32, field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn pct(v: &[u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let i = ((v.len() - 1) as f64 * p).round() as usize;
    v[i]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs bench targets without it
    // (in a debug build): skip the measurement there.
    if !std::env::args().any(|a| a == "--bench") {
        println!("lichess_bot: run with `cargo bench --bench lichess_bot`");
        return;
    }
    let rounds = env_num("BENCH_ROUNDS", 2);
    let engine = std::env::var("BENCH_ENGINE").unwrap_or_else(|_| "mcts".into());
    let clock = std::env::var("BENCH_CLOCK").unwrap_or_else(|_| "0.5+0".into());
    let clock: atomic_bot::config::TimeControl = clock
        .parse()
        .expect("BENCH_CLOCK: a lichess clock like 0.5+0");
    let games = env_num("BENCH_GAMES", 8) as usize;
    let think = Duration::from_millis(env_num("BENCH_OPP_THINK_MS", 30));
    let bot_token = "lip_benchbot";
    let mut accounts = vec![FakeAccount::new("BenchBot", bot_token, true)];
    for i in 0..games {
        accounts.push(FakeAccount::new(
            &format!("Opp{i}"),
            &format!("lip_opp{i}"),
            false,
        ));
    }
    let fake = FakeLichess::start(FakeConfig {
        accounts,
        ..FakeConfig::default()
    })
    .await
    .expect("fake server");

    let mut child = Command::new(env!("CARGO_BIN_EXE_atomic-bot"))
        .arg("lichess")
        .env("LICHESS_BOT_TOKEN", bot_token)
        .env("ATOMIC_BOT_LICHESS__URL", fake.url())
        .env("ATOMIC_BOT_CHALLENGE__MAX_GAMES", games.to_string())
        .env("ATOMIC_BOT_CHALLENGE__QUEUE_SIZE", "0")
        .env("ATOMIC_BOT_GAME__GREETING", "")
        .env("ATOMIC_BOT_GAME__GOODBYE", "")
        .env("ATOMIC_BOT_SEARCH__ENGINE", &engine)
        .env("LOG_FORMAT", "json")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn atomic-bot");
    let pid = child.id();
    let overheads = Arc::new(Mutex::new(Vec::<u64>::new()));
    let thinks = Arc::new(Mutex::new(Vec::<u64>::new()));
    let stderr = child.stderr.take().expect("stderr");
    let (o2, t2) = (overheads.clone(), thinks.clone());
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            // JSON logs put the event's fields at the top level (`flatten_event`).
            let f = if v["fields"].is_object() {
                &v["fields"]
            } else {
                &v
            };
            if let (Some(o), Some(t)) = (f["overhead_us"].as_u64(), f["think_ms"].as_u64()) {
                o2.lock().unwrap().push(o);
                t2.lock().unwrap().push(t);
            }
        }
    });
    assert!(
        fake.wait_until(Duration::from_secs(20), |f| f
            .event_stream_connections("benchbot")
            > 0)
            .await,
        "the bot did not connect"
    );
    let rss_idle = rss_kb(pid, "VmRSS:").unwrap_or(0);

    let mut rss_max_concurrent = 0u64;
    let mut total_games = 0;
    let started = Instant::now();
    for round in 0..rounds {
        let mut ids = Vec::new();
        for i in 0..games {
            let id = fake
                .challenge(
                    &format!("opp{i}"),
                    "benchbot",
                    &ChallengeSpec {
                        clock: Some((clock.limit_s, clock.increment_s)),
                        ..ChallengeSpec::default()
                    },
                )
                .expect("challenge");
            ids.push((i, id));
        }
        assert!(
            fake.wait_until(Duration::from_secs(20), |f| ids
                .iter()
                .all(|(_, id)| f.game(id).is_some()))
                .await,
            "round {round}: not all challenges accepted"
        );
        let mut tasks = Vec::new();
        for (i, id) in &ids {
            let mut s = Settings::default();
            s.lichess.url = fake.url();
            s.game.greeting = String::new();
            s.game.goodbye = String::new();
            s.game.ponder = false;
            let client =
                LichessClient::new(&s.lichess, SecretString::from(format!("lip_opp{i}"))).unwrap();
            let me = client.account().await.unwrap();
            let ctx = GameContext {
                client,
                settings: Arc::new(s),
                me: Arc::new(me),
                pickers: Arc::new(SlowFactory(
                    think,
                    AtomicUsize::new(*i + round as usize * 100),
                )),
                running: Arc::new(AtomicUsize::new(1)),
                metrics: Arc::new(Metrics::default()),
            };
            tasks.push(tokio::spawn(play_game(
                ctx,
                id.clone(),
                CancellationToken::new(),
            )));
        }
        // Sample RSS while all games run.
        loop {
            let running = fake.running_games("benchbot");
            if running == games {
                rss_max_concurrent = rss_max_concurrent.max(rss_kb(pid, "VmRSS:").unwrap_or(0));
            }
            if running == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        for t in tasks {
            let _ = t.await;
        }
        total_games += ids.len();
    }
    let hwm = rss_kb(pid, "VmHWM:").unwrap_or(0);
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let status = child.wait().expect("wait");
    let _ = reader.join();

    let mut o = overheads.lock().unwrap().clone();
    // No move line parsed means the log format changed under the bench, not a fast bot: a
    // run that measured nothing must not print a 0 µs median (it did from f7efda1 to session 9).
    assert!(
        !o.is_empty(),
        "no `move` log line with overhead_us/think_ms was read from the bot: has the JSON log format changed?"
    );
    o.sort_unstable();
    let t = thinks.lock().unwrap().clone();
    println!(
        "games: {total_games} in {rounds} rounds of {games} concurrent ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    println!(
        "turn overhead (receive gameState -> move request leaves, minus think), {} moves: median {} us, p90 {} us, p99 {} us, max {} us",
        o.len(),
        pct(&o, 0.5),
        pct(&o, 0.9),
        pct(&o, 0.99),
        o.last().copied().unwrap_or(0)
    );
    println!(
        "think time: mean {:.1} ms",
        t.iter().sum::<u64>() as f64 / t.len().max(1) as f64
    );
    println!(
        "bot RSS: idle {:.1} MB, max with {games} concurrent games {:.1} MB, peak (VmHWM) {:.1} MB",
        rss_idle as f64 / 1024.0,
        rss_max_concurrent as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    println!("bot exit after SIGTERM: {status}");
}
