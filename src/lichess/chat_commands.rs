//! Chat commands (`!help`, `!eval`, `!name`, `!queue`) and chat greetings.
//!
//! Pure: the game task hands each `chatLine` to a [`ChatResponder`] together with a
//! [`ChatContext`] snapshot (our name, the latest search result, the load) and posts whatever
//! text comes back. Nothing here does I/O, so every reply is unit-tested.
//!
//! Rules, and why:
//! - Commands are answered in the room they were asked in (the player room is where the opponent
//!   is; spectators get the same commands in theirs).
//! - Our own lines (lichess echoes them back) and lichess's system lines are never answered, so
//!   two bots running this code cannot loop on each other's replies: replies never start with `!`.
//! - At most one reply per room per cooldown (5 s by default): lichess silently drops chat it
//!   considers spam, and a muted bot loses its greetings too.
//! - Replies fit lichess's 140-character limit; a long principal variation is cut at a move.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::config::MAX_CHAT_CHARS;

/// The two chat rooms of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Room {
    /// Between the two players.
    Player,
    /// The spectators' room.
    Spectator,
}

impl Room {
    /// Parses lichess's room name (`"player"` / `"spectator"`).
    pub fn parse(name: &str) -> Option<Room> {
        match name {
            "player" => Some(Room::Player),
            "spectator" => Some(Room::Spectator),
            _ => None,
        }
    }

    /// lichess's name for the room, as the chat endpoint's `room` form field.
    pub fn as_str(self) -> &'static str {
        match self {
            Room::Player => "player",
            Room::Spectator => "spectator",
        }
    }

    fn index(self) -> usize {
        match self {
            Room::Player => 0,
            Room::Spectator => 1,
        }
    }
}

/// A chat command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `!help` (also `!commands`): lists the commands.
    Help,
    /// `!eval`: our current evaluation and principal variation.
    Eval,
    /// `!name`: the engine's name and version.
    Name,
    /// `!queue`: how busy the bot is.
    Queue,
}

impl Command {
    /// Parses a chat line: the first word, case-insensitive, must be one of the commands with its
    /// `!`. Anything else (ordinary chat, unknown commands) is `None` and gets no reply.
    pub fn parse(text: &str) -> Option<Command> {
        let word = text.split_whitespace().next()?;
        let name = word.strip_prefix('!')?;
        match name.to_ascii_lowercase().as_str() {
            "help" | "commands" => Some(Command::Help),
            "eval" => Some(Command::Eval),
            "name" => Some(Command::Name),
            "queue" => Some(Command::Queue),
            _ => None,
        }
    }
}

/// A score as the search reports it, from our side.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalScore {
    /// Centipawns, positive when we are better.
    Cp(i32),
    /// Mate in N moves: positive when we mate, negative when we are mated.
    Mate(i32),
}

/// The latest search result of this game, in text form (the chat needs nothing else, and this
/// keeps the module independent of the search's types). Fields a move picker cannot provide
/// are left empty and omitted from the reply.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EvalReport {
    /// The score from our side, if the picker reports one.
    pub score: Option<EvalScore>,
    /// Our win probability (0..1) if the picker gives one.
    pub win_probability: Option<f32>,
    /// Principal variation in UCI notation, first move first (may be just the move played).
    pub pv: Vec<String>,
    /// Nodes searched for that result (0 = unknown).
    pub nodes: u64,
    /// Search depth reached (0 = unknown).
    pub depth: u32,
    /// When the move came from elsewhere than our search, that source and what it said
    /// (`tablebase (win, DTZ 7)`, `opening book (lichess explorer: 1200 games, 56%)`).
    pub source: Option<String>,
}

/// How busy the bot is, for `!queue`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueReport {
    /// Games being played now.
    pub games_running: usize,
    /// The configured concurrency limit.
    pub max_games: usize,
    /// Accepted or queued challenges whose games have not started.
    pub challenges_waiting: usize,
}

/// What a reply may mention. Built by the game task from its own state when a command arrives.
#[derive(Clone, Copy, Debug)]
pub struct ChatContext<'a> {
    /// Our lichess username.
    pub bot_name: &'a str,
    /// Our version (`CARGO_PKG_VERSION`).
    pub version: &'a str,
    /// The latest evaluation of this game, if we have searched yet.
    pub eval: Option<&'a EvalReport>,
    /// The bot's load.
    pub queue: QueueReport,
}

/// The reply text for `command`.
pub fn reply(command: Command, ctx: &ChatContext<'_>) -> String {
    let text = match command {
        Command::Help => {
            "Commands: !help, !eval (my evaluation and line), !name, !queue".to_string()
        }
        Command::Name => format!(
            "I am {}, running atomic-bot {}: an MCTS engine for Atomic chess, written in Rust.",
            ctx.bot_name, ctx.version
        ),
        Command::Queue => {
            let q = ctx.queue;
            let mut text = format!(
                "Playing {} of {} games",
                q.games_running,
                q.max_games.max(1)
            );
            match q.challenges_waiting {
                0 => text.push_str(", no challenge waiting."),
                1 => text.push_str(", 1 challenge waiting."),
                n => {
                    let _ = write!(text, ", {n} challenges waiting.");
                }
            }
            text
        }
        Command::Eval => match ctx.eval {
            None => "No evaluation yet: I have not searched in this game.".to_string(),
            Some(eval) => eval_text(eval),
        },
    };
    truncate_chars(&text, MAX_CHAT_CHARS)
}

/// `"Eval +1.23 (win 63%), depth 12, 45k nodes. PV: e2e4 d7d5 …"`, cut at a whole move so that
/// it fits one chat line; unknown parts are left out.
fn eval_text(eval: &EvalReport) -> String {
    let mut text = match (eval.score, &eval.source) {
        (_, Some(source)) => format!("Move from the {source}"),
        (Some(EvalScore::Cp(cp)), None) => format!("Eval {:+.2}", f64::from(cp) / 100.0),
        (Some(EvalScore::Mate(n)), None) if n > 0 => format!("Eval: I mate in {n}"),
        (Some(EvalScore::Mate(n)), None) => {
            format!("Eval: I am mated in {}", n.unsigned_abs())
        }
        (None, None) => "Eval".to_string(),
    };
    if let Some(p) = eval.win_probability
        && p.is_finite()
    {
        let p = (p.clamp(0.0, 1.0) * 100.0).round();
        if eval.score.is_some() {
            let _ = write!(text, " (win {p:.0}%)");
        } else {
            let _ = write!(text, ": win {p:.0}%");
        }
    }
    if eval.depth > 0 {
        let _ = write!(text, ", depth {}", eval.depth);
    }
    if eval.nodes > 0 {
        let _ = write!(text, ", {} nodes", human_count(eval.nodes));
    }
    text.push('.');
    if !eval.pv.is_empty() {
        text.push_str(" PV:");
        for mv in &eval.pv {
            if text.chars().count() + 1 + mv.chars().count() > MAX_CHAT_CHARS {
                break;
            }
            text.push(' ');
            text.push_str(mv);
        }
    }
    text
}

/// `950`, `45k`, `3.2M`.
fn human_count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// Replaces `{me}` and `{opponent}` in a greeting template and fits it to one chat line. An empty
/// template means "no greeting" and gives `None`.
pub fn render_greeting(template: &str, me: &str, opponent: &str) -> Option<String> {
    let text = template.trim();
    if text.is_empty() {
        return None;
    }
    let text = text.replace("{me}", me).replace("{opponent}", opponent);
    Some(truncate_chars(&text, MAX_CHAT_CHARS))
}

/// The first `max` characters of `text` (not bytes: names may be non-ASCII).
pub fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => text[..cut].to_string(),
        None => text.to_string(),
    }
}

/// Per-game chat state: who we are and when we last replied in each room.
#[derive(Debug)]
pub struct ChatResponder {
    /// Our username, lowercase, to ignore our own echoed lines.
    our_name: String,
    /// Minimum time between replies in one room.
    cooldown: Duration,
    /// Last reply per room (`Room::index`).
    last_reply: [Option<Instant>; 2],
}

impl ChatResponder {
    /// A responder for the bot called `our_name`.
    pub fn new(our_name: &str, cooldown: Duration) -> Self {
        ChatResponder {
            our_name: our_name.to_ascii_lowercase(),
            cooldown,
            last_reply: [None, None],
        }
    }

    /// Handles one `chatLine`; returns the reply to post in the same room, if any.
    pub fn respond(
        &mut self,
        room: Room,
        username: &str,
        text: &str,
        now: Instant,
        ctx: &ChatContext<'_>,
    ) -> Option<String> {
        let user = username.to_ascii_lowercase();
        if user == self.our_name || user == "lichess" {
            return None;
        }
        let command = Command::parse(text)?;
        let slot = &mut self.last_reply[room.index()];
        if let Some(last) = *slot
            && now.saturating_duration_since(last) < self.cooldown
        {
            return None;
        }
        *slot = Some(now);
        Some(reply(command, ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(eval: Option<&'a EvalReport>) -> ChatContext<'a> {
        ChatContext {
            bot_name: "OurAtomicBot",
            version: "0.1.0",
            eval,
            queue: QueueReport {
                games_running: 1,
                max_games: 2,
                challenges_waiting: 3,
            },
        }
    }

    fn eval(score: EvalScore, pv: &[&str]) -> EvalReport {
        EvalReport {
            score: Some(score),
            win_probability: Some(0.634),
            pv: pv.iter().map(ToString::to_string).collect(),
            nodes: 45_678,
            depth: 12,
            source: None,
        }
    }

    #[test]
    fn parses_commands() {
        assert_eq!(Command::parse("!eval"), Some(Command::Eval));
        assert_eq!(Command::parse("  !EVAL please"), Some(Command::Eval));
        assert_eq!(Command::parse("!commands"), Some(Command::Help));
        assert_eq!(Command::parse("!name"), Some(Command::Name));
        assert_eq!(Command::parse("!queue"), Some(Command::Queue));
        assert_eq!(Command::parse("eval"), None);
        assert_eq!(Command::parse("!wait"), None);
        assert_eq!(Command::parse(""), None);
        assert_eq!(Command::parse("gl hf !eval"), None);
    }

    #[test]
    fn rooms_parse() {
        assert_eq!(Room::parse("player"), Some(Room::Player));
        assert_eq!(
            Room::parse("spectator").map(Room::as_str),
            Some("spectator")
        );
        assert_eq!(Room::parse("lobby"), None);
    }

    #[test]
    fn eval_reply_has_score_and_pv() {
        let e = eval(EvalScore::Cp(123), &["e2e4", "d7d5", "g1f3"]);
        let text = reply(Command::Eval, &ctx(Some(&e)));
        assert_eq!(
            text,
            "Eval +1.23 (win 63%), depth 12, 45k nodes. PV: e2e4 d7d5 g1f3"
        );
        let e = eval(EvalScore::Cp(-50), &[]);
        assert!(reply(Command::Eval, &ctx(Some(&e))).starts_with("Eval -0.50"));
        let e = eval(EvalScore::Mate(3), &["d1h5"]);
        assert!(reply(Command::Eval, &ctx(Some(&e))).starts_with("Eval: I mate in 3"));
        let e = eval(EvalScore::Mate(-2), &[]);
        assert!(reply(Command::Eval, &ctx(Some(&e))).starts_with("Eval: I am mated in 2"));
        assert!(reply(Command::Eval, &ctx(None)).starts_with("No evaluation yet"));
        // a picker that only knows its win probability and move
        let e = EvalReport {
            win_probability: Some(0.5),
            pv: vec!["e2e4".into()],
            ..EvalReport::default()
        };
        assert_eq!(
            reply(Command::Eval, &ctx(Some(&e))),
            "Eval: win 50%. PV: e2e4"
        );
    }

    #[test]
    fn eval_reply_names_the_tablebase_or_the_book() {
        let e = EvalReport {
            win_probability: Some(0.99),
            pv: vec!["e1e2".into()],
            source: Some("tablebase (win, DTZ 7)".into()),
            ..EvalReport::default()
        };
        assert_eq!(
            reply(Command::Eval, &ctx(Some(&e))),
            "Move from the tablebase (win, DTZ 7): win 99%. PV: e1e2"
        );
        let e = EvalReport {
            source: Some("opening book (lichess explorer: 1000 games, 62%)".into()),
            pv: vec!["g1f3".into()],
            ..EvalReport::default()
        };
        let text = reply(Command::Eval, &ctx(Some(&e)));
        assert!(text.starts_with("Move from the opening book"), "{text}");
    }

    #[test]
    fn long_pv_is_cut_at_a_move() {
        let pv: Vec<&str> = std::iter::repeat_n("e7e8q", 60).collect();
        let e = eval(EvalScore::Cp(5), &pv);
        let text = reply(Command::Eval, &ctx(Some(&e)));
        assert!(text.chars().count() <= MAX_CHAT_CHARS, "{}", text.len());
        assert!(text.ends_with("e7e8q"), "{text}");
    }

    #[test]
    fn other_replies() {
        let c = ctx(None);
        assert!(reply(Command::Help, &c).contains("!eval"));
        assert_eq!(
            reply(Command::Name, &c),
            "I am OurAtomicBot, running atomic-bot 0.1.0: an MCTS engine for Atomic chess, written in Rust."
        );
        assert_eq!(
            reply(Command::Queue, &c),
            "Playing 1 of 2 games, 3 challenges waiting."
        );
        for cmd in [Command::Help, Command::Name, Command::Queue, Command::Eval] {
            let text = reply(cmd, &c);
            assert!(
                !text.starts_with('!'),
                "a reply must never look like a command: {text}"
            );
            assert!(text.chars().count() <= MAX_CHAT_CHARS);
        }
    }

    #[test]
    fn responder_ignores_self_system_and_chatter() {
        let mut r = ChatResponder::new("OurAtomicBot", crate::config::DEFAULT_CHAT_COOLDOWN);
        let now = Instant::now();
        let c = ctx(None);
        assert_eq!(
            r.respond(Room::Player, "ourAtomicBot", "!help", now, &c),
            None
        );
        assert_eq!(r.respond(Room::Player, "lichess", "!help", now, &c), None);
        assert_eq!(r.respond(Room::Player, "BoomFan", "gl hf", now, &c), None);
        assert!(
            r.respond(Room::Player, "BoomFan", "!help", now, &c)
                .is_some()
        );
    }

    #[test]
    fn responder_cooldown_per_room() {
        let mut r = ChatResponder::new("me", Duration::from_secs(5));
        let t0 = Instant::now();
        let c = ctx(None);
        assert!(r.respond(Room::Player, "opp", "!name", t0, &c).is_some());
        assert!(
            r.respond(
                Room::Player,
                "opp",
                "!name",
                t0 + Duration::from_secs(1),
                &c
            )
            .is_none()
        );
        assert!(
            r.respond(
                Room::Spectator,
                "fan",
                "!name",
                t0 + Duration::from_secs(1),
                &c
            )
            .is_some()
        );
        assert!(
            r.respond(
                Room::Player,
                "opp",
                "!name",
                t0 + Duration::from_secs(6),
                &c
            )
            .is_some()
        );
    }

    #[test]
    fn greetings() {
        assert_eq!(
            render_greeting("Good luck {opponent}, {me} here!", "Bot", "Fan").as_deref(),
            Some("Good luck Fan, Bot here!")
        );
        assert_eq!(render_greeting("   ", "Bot", "Fan"), None);
        let long = "é".repeat(300);
        assert_eq!(
            render_greeting(&long, "a", "b").unwrap().chars().count(),
            MAX_CHAT_CHARS
        );
    }

    #[test]
    fn counts_are_human() {
        assert_eq!(human_count(950), "950");
        assert_eq!(human_count(45_678), "45k");
        assert_eq!(human_count(3_210_000), "3.2M");
    }
}
