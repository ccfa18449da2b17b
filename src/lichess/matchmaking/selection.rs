//! Whom to challenge, and at which clock: [`Matchmaker::choose`] filters the online bots
//! (atomic players in the rating band, not us, not blocked, not backed off) and spreads the
//! challenges over them; ties and the time control are drawn from a seeded generator, so
//! tests are repeatable.

use tokio::time::Instant;

use super::api::{ChallengeRequest, OnlineBot};
use super::bookkeeping::Matchmaker;

impl Matchmaker {
    /// Picks an opponent among `bots` and a time control. `our_id` is skipped; `our_rating`
    /// (our atomic rating) anchors `max_rating_diff`. Prefers bots challenged least often, then
    /// least recently; ties are broken at random.
    pub fn choose(
        &mut self,
        bots: &[OnlineBot],
        our_id: &str,
        our_rating: Option<u32>,
        now: Instant,
    ) -> Option<(OnlineBot, ChallengeRequest)> {
        let our_id = our_id.to_ascii_lowercase();
        let cfg = &self.config;
        let mut candidates: Vec<&OnlineBot> = bots
            .iter()
            .filter(|b| b.id != our_id && b.atomic_games > 0)
            .filter(|b| !self.blocked.contains(&b.id))
            .filter(|b| match b.atomic_rating {
                None => false,
                Some(r) => {
                    let in_band = (cfg.min_rating..=cfg.max_rating).contains(&r);
                    let near = match (our_rating, cfg.max_rating_diff) {
                        (_, 0) | (None, _) => true,
                        (Some(ours), diff) => r.abs_diff(ours) <= diff,
                    };
                    in_band && near
                }
            })
            .filter(|b| {
                self.opponents
                    .get(&b.id)
                    .and_then(|rec| rec.skip_until)
                    .is_none_or(|until| now >= until)
            })
            .collect();
        if candidates.is_empty() || cfg.time_controls.is_empty() {
            return None;
        }
        let key = |b: &OnlineBot| {
            let rec = self.opponents.get(&b.id);
            (
                rec.map_or(0, |r| r.challenged),
                rec.and_then(|r| r.last_challenged),
            )
        };
        let best = candidates.iter().map(|b| key(b)).min()?;
        candidates.retain(|b| key(b) == best);
        let pick = candidates[self.next_random(candidates.len())].clone();
        let tc_index = self.next_random(self.config.time_controls.len());
        let tc = self.config.time_controls[tc_index];
        let request = ChallengeRequest {
            clock_limit_s: tc.limit_s,
            clock_increment_s: tc.increment_s,
            rated: self.config.rated,
        };
        Some((pick, request))
    }

    /// A uniform-ish index below `n` (xorshift64; fine for tie-breaks).
    fn next_random(&mut self, n: usize) -> usize {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        (x % n.max(1) as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{MatchmakingConfig, TimeControl};
    use crate::lichess::matchmaking::Decision;
    use crate::lichess::matchmaking::api::ChallengeError;
    use crate::lichess::matchmaking::test_support::{bot, cfg, idle, secs};

    #[test]
    fn choose_filters_band_atomic_self_and_blocklist() {
        let t0 = Instant::now();
        let config = MatchmakingConfig {
            min_rating: 1500,
            max_rating: 2500,
            max_rating_diff: 300,
            block_list: vec!["Blocked".into()],
            ..cfg()
        };
        let mut m = Matchmaker::new(config, t0, 7);
        let bots = vec![
            bot("me", 2000, 50),
            bot("noatomic", 2000, 0),
            bot("toolow", 1400, 10),
            bot("toofar", 2400, 10),
            bot("blocked", 2000, 10),
            OnlineBot {
                atomic_rating: None,
                ..bot("unrated", 0, 3)
            },
            bot("good", 2100, 10),
        ];
        let (pick, req) = m.choose(&bots, "Me", Some(2000), t0).unwrap();
        assert_eq!(pick.id, "good");
        assert!(!req.rated);
        assert!(m.config().time_controls.contains(&TimeControl {
            limit_s: req.clock_limit_s,
            increment_s: req.clock_increment_s
        }));
        // without our rating only the absolute band applies
        let bots = vec![bot("toofar", 2400, 10)];
        assert!(m.choose(&bots, "me", None, t0).is_some());
        assert!(m.choose(&[], "me", None, t0).is_none());
    }

    #[test]
    fn choose_spreads_challenges() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 3);
        let bots = vec![bot("a", 1500, 5), bot("b", 1500, 5), bot("c", 1500, 5)];
        let mut seen = Vec::new();
        for i in 0..3 {
            let (pick, _) = m.choose(&bots, "me", None, t0).unwrap();
            m.challenge_sent(&format!("id{i}"), &pick.id, t0 + secs(i));
            m.challenge_canceled(&format!("id{i}"));
            seen.push(pick.id);
        }
        seen.sort();
        assert_eq!(seen, ["a", "b", "c"]);
    }

    #[test]
    fn opponent_limit_skips_only_that_opponent() {
        let t0 = Instant::now();
        let mut m = Matchmaker::new(cfg(), t0, 1);
        let bots = vec![bot("tired", 1500, 5), bot("fresh", 1500, 5)];
        m.challenge_failed(
            "tired",
            &ChallengeError::OpponentLimited { seconds: Some(100) },
            t0,
        );
        for _ in 0..5 {
            assert_eq!(
                m.choose(&bots, "me", None, t0 + secs(50)).unwrap().0.id,
                "fresh"
            );
        }
        assert_eq!(m.decide(t0 + secs(200), idle(1)), Decision::Challenge);
    }
}
