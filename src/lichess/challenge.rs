//! The challenge policy: a pure function from a challenge, the settings and our load to a
//! decision, with lichess's decline reason keys (API.md §2.3). Pure so every rule is unit
//! tested and the end-to-end tests only need to check the wiring.

use crate::config::ChallengeSettings;
use crate::lichess::model::{Challenge, Compat, TimeControl};

/// Lichess decline reasons (the key sent as `reason=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclineReason {
    /// Not accepting challenges now.
    Generic,
    /// Not now, try later (busy or shutting down).
    Later,
    /// Time control too fast.
    TooFast,
    /// Time control too slow.
    TooSlow,
    /// This kind of time control is not accepted.
    TimeControl,
    /// Please send a rated challenge.
    Rated,
    /// Please send a casual challenge.
    Casual,
    /// Please send standard chess.
    Standard,
    /// This variant is not accepted.
    Variant,
    /// No bots.
    NoBot,
    /// Only bots.
    OnlyBot,
}

impl DeclineReason {
    /// The key lichess expects in the form.
    pub fn key(self) -> &'static str {
        match self {
            DeclineReason::Generic => "generic",
            DeclineReason::Later => "later",
            DeclineReason::TooFast => "tooFast",
            DeclineReason::TooSlow => "tooSlow",
            DeclineReason::TimeControl => "timeControl",
            DeclineReason::Rated => "rated",
            DeclineReason::Casual => "casual",
            DeclineReason::Standard => "standard",
            DeclineReason::Variant => "variant",
            DeclineReason::NoBot => "noBot",
            DeclineReason::OnlyBot => "onlyBot",
        }
    }
}

/// What to do with a challenge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Accept now.
    Accept,
    /// Acceptable, but every slot is busy: hold it until a game ends.
    Queue,
    /// Decline with this reason.
    Decline(DeclineReason),
    /// Not for us to answer (our own outgoing challenge).
    Ignore,
}

/// Our current load, as counted by the supervisor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// Games being played.
    pub playing: u32,
    /// Challenges accepted whose `gameStart` has not arrived yet.
    pub pending: u32,
    /// Challenges already held in the queue.
    pub queued: u32,
    /// Shutting down: accept nothing new.
    pub shutting_down: bool,
    /// lichess's daily bot-versus-bot game limit holds: bots get `later`, humans play on.
    pub bot_games_limited: bool,
}

/// Lichess's speed estimate: `limit + 40 × increment` seconds; below 30 s is UltraBullet,
/// which bots may not play.
pub fn estimated_seconds(limit: u32, increment: u32) -> u64 {
    u64::from(limit) + 40 * u64::from(increment)
}

/// Decides a challenge. `me` is our lowercase user id. The first failing rule wins, in the
/// order: ours, allow/block lists, variant, time control, mode, bot/human, shutdown and the
/// daily bot-game limit, load.
pub fn decide(
    challenge: &Challenge,
    compat: Option<&Compat>,
    settings: &ChallengeSettings,
    load: Load,
    me: &str,
) -> Decision {
    let challenger = challenge.challenger.as_ref();
    let challenger_id = challenger.map(|c| c.id.to_lowercase()).unwrap_or_default();
    if challenger_id == me.to_lowercase() {
        return Decision::Ignore;
    }
    let listed = |list: &[String]| list.iter().any(|u| u.eq_ignore_ascii_case(&challenger_id));
    if listed(&settings.block_list)
        || (!settings.allow_list.is_empty() && !listed(&settings.allow_list))
    {
        return Decision::Decline(DeclineReason::Generic);
    }
    if !settings
        .variants
        .iter()
        .any(|v| v.eq_ignore_ascii_case(&challenge.variant.key))
    {
        return Decision::Decline(DeclineReason::Variant);
    }
    if let Some(reason) = time_control_reason(&challenge.time_control, settings) {
        return Decision::Decline(reason);
    }
    // A challenge lichess itself flags as not bot-compatible cannot be played; after the
    // checks above the remaining cause is the time control.
    if compat.is_some_and(|c| !c.bot) {
        return Decision::Decline(DeclineReason::TooFast);
    }
    let wants = |m: &str| settings.modes.iter().any(|x| x.eq_ignore_ascii_case(m));
    if challenge.rated && !wants("rated") {
        return Decision::Decline(DeclineReason::Casual);
    }
    if !challenge.rated && !wants("casual") {
        return Decision::Decline(DeclineReason::Rated);
    }
    let is_bot = challenger.is_some_and(super::model::event::ChallengeUser::is_bot);
    if is_bot && !settings.accept_bots {
        return Decision::Decline(DeclineReason::NoBot);
    }
    if !is_bot && settings.only_bots {
        return Decision::Decline(DeclineReason::OnlyBot);
    }
    if load.shutting_down || (is_bot && load.bot_games_limited) {
        return Decision::Decline(DeclineReason::Later);
    }
    if matches!(challenge.time_control, TimeControl::Correspondence { .. }) {
        // A correspondence game holds no real-time slot: it is played a move at a time
        // between check-ins (`lichess::correspondence`).
        return Decision::Accept;
    }
    if load.playing + load.pending < settings.max_games {
        Decision::Accept
    } else if load.queued < settings.queue_size {
        Decision::Queue
    } else {
        Decision::Decline(DeclineReason::Later)
    }
}

fn time_control_reason(tc: &TimeControl, s: &ChallengeSettings) -> Option<DeclineReason> {
    match *tc {
        TimeControl::Clock { limit, increment } => {
            if estimated_seconds(limit, increment) < 30
                || limit < s.min_initial_s
                || increment < s.min_increment_s
            {
                Some(DeclineReason::TooFast)
            } else if limit > s.max_initial_s || increment > s.max_increment_s {
                Some(DeclineReason::TooSlow)
            } else {
                None
            }
        }
        TimeControl::Correspondence { days_per_turn } => {
            if !s.correspondence {
                Some(DeclineReason::TimeControl)
            } else if days_per_turn < s.min_days {
                Some(DeclineReason::TooFast)
            } else if days_per_turn > s.max_days {
                Some(DeclineReason::TooSlow)
            } else {
                None
            }
        }
        TimeControl::Unlimited => (!s.unlimited).then_some(DeclineReason::TimeControl),
        TimeControl::Unknown => Some(DeclineReason::TimeControl),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lichess::model::{ChallengeUser, TimeControl as Tc, Variant};

    fn ch(variant: &str, tc: Tc, rated: bool, bot: bool, from: &str) -> Challenge {
        Challenge {
            id: "abcdefgh".into(),
            status: "created".into(),
            challenger: Some(ChallengeUser {
                id: from.into(),
                name: from.into(),
                title: bot.then(|| "BOT".into()),
                rating: Some(1500),
            }),
            variant: Variant {
                key: variant.into(),
                name: variant.into(),
            },
            rated,
            time_control: tc,
            ..Challenge::default()
        }
    }
    fn clock(limit: u32, increment: u32) -> Tc {
        Tc::Clock { limit, increment }
    }
    fn d(c: &Challenge, s: &ChallengeSettings, load: Load) -> Decision {
        decide(c, None, s, load, "me")
    }
    use DeclineReason::*;

    #[test]
    fn each_rule_has_its_reason() {
        let s = ChallengeSettings::default();
        let ok = ch("atomic", clock(180, 2), true, false, "alice");
        assert_eq!(d(&ok, &s, Load::default()), Decision::Accept);
        assert_eq!(
            d(
                &ch("standard", clock(180, 2), true, false, "a"),
                &s,
                Load::default()
            ),
            Decision::Decline(Variant)
        );
        // UltraBullet is always tooFast, even with min_initial_s = 0.
        assert_eq!(
            d(
                &ch("atomic", clock(15, 0), true, false, "a"),
                &s,
                Load::default()
            ),
            Decision::Decline(TooFast)
        );
        assert_eq!(
            d(
                &ch("atomic", clock(30, 0), true, false, "a"),
                &s,
                Load::default()
            ),
            Decision::Accept
        );
        assert_eq!(
            d(
                &ch("atomic", clock(7200, 0), true, false, "a"),
                &s,
                Load::default()
            ),
            Decision::Decline(TooSlow)
        );
        assert_eq!(
            d(
                &ch("atomic", clock(60, 90), true, false, "a"),
                &s,
                Load::default()
            ),
            Decision::Decline(TooSlow)
        );
        let strict = ChallengeSettings {
            min_initial_s: 120,
            min_increment_s: 1,
            ..s.clone()
        };
        assert_eq!(
            d(
                &ch("atomic", clock(60, 1), true, false, "a"),
                &strict,
                Load::default()
            ),
            Decision::Decline(TooFast)
        );
        assert_eq!(
            d(
                &ch("atomic", clock(180, 0), true, false, "a"),
                &strict,
                Load::default()
            ),
            Decision::Decline(TooFast)
        );
        let corr = Tc::Correspondence { days_per_turn: 3 };
        assert_eq!(
            d(
                &ch("atomic", corr.clone(), true, false, "a"),
                &s,
                Load::default()
            ),
            Decision::Decline(TimeControl)
        );
        let corr_ok = ChallengeSettings {
            correspondence: true,
            min_days: 2,
            max_days: 2,
            ..s.clone()
        };
        assert_eq!(
            d(
                &ch("atomic", corr, true, false, "a"),
                &corr_ok,
                Load::default()
            ),
            Decision::Decline(TooSlow)
        );
        assert_eq!(
            d(
                &ch(
                    "atomic",
                    Tc::Correspondence { days_per_turn: 1 },
                    true,
                    false,
                    "a"
                ),
                &corr_ok,
                Load::default()
            ),
            Decision::Decline(TooFast)
        );
        assert_eq!(
            d(
                &ch("atomic", Tc::Unlimited, true, false, "a"),
                &s,
                Load::default()
            ),
            Decision::Decline(TimeControl)
        );
        let casual_only = ChallengeSettings {
            modes: vec!["casual".into()],
            ..s.clone()
        };
        assert_eq!(
            d(&ok, &casual_only, Load::default()),
            Decision::Decline(Casual)
        );
        let rated_only = ChallengeSettings {
            modes: vec!["rated".into()],
            ..s.clone()
        };
        assert_eq!(
            d(
                &ch("atomic", clock(180, 2), false, false, "a"),
                &rated_only,
                Load::default()
            ),
            Decision::Decline(Rated)
        );
        let no_bots = ChallengeSettings {
            accept_bots: false,
            ..s.clone()
        };
        assert_eq!(
            d(
                &ch("atomic", clock(180, 2), true, true, "b"),
                &no_bots,
                Load::default()
            ),
            Decision::Decline(NoBot)
        );
        let only_bots = ChallengeSettings {
            only_bots: true,
            ..s.clone()
        };
        assert_eq!(
            d(&ok, &only_bots, Load::default()),
            Decision::Decline(OnlyBot)
        );
        let blocked = ChallengeSettings {
            block_list: vec!["Alice".into()],
            ..s.clone()
        };
        assert_eq!(
            d(&ok, &blocked, Load::default()),
            Decision::Decline(Generic)
        );
        let allowed = ChallengeSettings {
            allow_list: vec!["bob".into()],
            ..s.clone()
        };
        assert_eq!(
            d(&ok, &allowed, Load::default()),
            Decision::Decline(Generic)
        );
        let incompatible = Compat {
            bot: false,
            board: true,
        };
        assert_eq!(
            decide(&ok, Some(&incompatible), &s, Load::default(), "me"),
            Decision::Decline(TooFast)
        );
        assert_eq!(
            d(
                &ch("atomic", clock(180, 2), true, false, "ME"),
                &s,
                Load::default()
            ),
            Decision::Ignore
        );
    }

    #[test]
    fn load_counts_pending_games_then_queues_then_later() {
        let s = ChallengeSettings {
            max_games: 2,
            queue_size: 1,
            ..ChallengeSettings::default()
        };
        let ok = ch("atomic", clock(60, 0), false, true, "bot");
        let load = |playing, pending, queued| Load {
            playing,
            pending,
            queued,
            ..Load::default()
        };
        assert_eq!(d(&ok, &s, load(1, 0, 0)), Decision::Accept);
        assert_eq!(d(&ok, &s, load(1, 1, 0)), Decision::Queue);
        assert_eq!(d(&ok, &s, load(0, 2, 0)), Decision::Queue);
        assert_eq!(d(&ok, &s, load(2, 0, 1)), Decision::Decline(Later));
        let down = Load {
            shutting_down: true,
            ..Load::default()
        };
        assert_eq!(d(&ok, &s, down), Decision::Decline(Later));
    }

    /// A correspondence game takes no real-time slot: accepted with every slot busy and the
    /// queue full, but not while shutting down.
    #[test]
    fn correspondence_is_accepted_whatever_the_real_time_load() {
        let s = ChallengeSettings {
            correspondence: true,
            max_games: 1,
            queue_size: 0,
            ..ChallengeSettings::default()
        };
        let corr = ch(
            "atomic",
            Tc::Correspondence { days_per_turn: 3 },
            false,
            false,
            "alice",
        );
        let full = Load {
            playing: 1,
            pending: 1,
            queued: 3,
            ..Load::default()
        };
        assert_eq!(d(&corr, &s, full), Decision::Accept);
        let realtime = ch("atomic", clock(60, 0), false, false, "alice");
        assert_eq!(d(&realtime, &s, full), Decision::Decline(Later));
        let down = Load {
            shutting_down: true,
            ..full
        };
        assert_eq!(d(&corr, &s, down), Decision::Decline(Later));
    }

    /// lichess's daily bot-game limit: bots are told `later`, humans still play, even with
    /// free slots.
    #[test]
    fn the_daily_bot_game_limit_declines_bots_only() {
        let s = ChallengeSettings::default();
        let limited = Load {
            bot_games_limited: true,
            ..Load::default()
        };
        let from_bot = ch("atomic", clock(60, 0), false, true, "somebot");
        let from_human = ch("atomic", clock(60, 0), false, false, "alice");
        assert_eq!(d(&from_bot, &s, limited), Decision::Decline(Later));
        assert_eq!(d(&from_human, &s, limited), Decision::Accept);
        assert_eq!(d(&from_bot, &s, Load::default()), Decision::Accept);
    }

    #[test]
    fn keys_are_lichess_keys() {
        assert_eq!(TooFast.key(), "tooFast");
        assert_eq!(NoBot.key(), "noBot");
        assert_eq!(OnlyBot.key(), "onlyBot");
        assert_eq!(TimeControl.key(), "timeControl");
    }
}
