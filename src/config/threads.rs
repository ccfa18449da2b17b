//! `search.threads`: how many search threads the bot uses in total, and where that number
//! comes from.
//!
//! The default, `"auto"`, is every core this process may use, not the host's count: a bot in a
//! container limited to 2 CPUs on a 64-core host must not start 64 searchers that then share
//! 2 cores. [`std::thread::available_parallelism`] gives exactly that number on Linux: the
//! calling thread's affinity mask (`taskset`, systemd `CPUAffinity=`, Docker `cpuset:`),
//! capped by the cgroup v1 or v2 CPU quota (systemd `CPUQuota=`, Docker `cpus:`), rounded down
//! and at least 1. Its documentation names the one case where it overcounts: the affinity mask
//! or the cgroup files cannot be read (a sandbox). It is asked once, on the first use, from the
//! thread that loads the configuration, before any thread is pinned.
//!
//! The rule itself, [`resolve`], is a pure function of the setting and that count, so it is
//! tested with injected counts.

use std::fmt;
use std::num::NonZeroUsize;
use std::sync::OnceLock;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The most search threads the bot starts (the UCI `Threads` option's maximum too): beyond
/// this a configured number is an error and a detected one is capped.
pub const MAX_THREADS: usize = 256;

/// The `search.threads` setting as written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Threads {
    /// `"auto"` or absent: every core the process may use.
    #[default]
    Auto,
    /// An explicit number (validated to be 1..=[`MAX_THREADS`]).
    Count(u32),
}

/// Where the effective thread count came from (printed by `check-config`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadsSource {
    /// `search.threads` set to a number.
    Configured,
    /// `"auto"`: the cores the process may use (affinity mask and cgroup quota).
    Detected,
    /// `"auto"`, but the count could not be read: one thread, the safe choice.
    Undetected,
}

/// The number of search threads the bot uses in total, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EffectiveThreads {
    /// Search threads shared by all games (at least 1).
    pub count: usize,
    /// Where `count` came from.
    pub source: ThreadsSource,
}

impl fmt::Display for EffectiveThreads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.count;
        match self.source {
            ThreadsSource::Configured => write!(f, "{n} (set by search.threads)"),
            ThreadsSource::Detected => write!(
                f,
                "{n} (search.threads = \"auto\": the cores this process may use, from its \
                 CPU affinity and cgroup CPU quota)"
            ),
            ThreadsSource::Undetected => write!(
                f,
                "{n} (search.threads = \"auto\", but the usable cores could not be counted; \
                 set search.threads to a number)"
            ),
        }
    }
}

/// The rule: a configured number is used as it is; `"auto"` is the detected count (`None`:
/// detection failed), capped at [`MAX_THREADS`]; if nothing could be detected, 1.
pub fn resolve(setting: Threads, detected: Option<NonZeroUsize>) -> EffectiveThreads {
    match (setting, detected) {
        (Threads::Count(n), _) => EffectiveThreads {
            count: (n as usize).max(1),
            source: ThreadsSource::Configured,
        },
        (Threads::Auto, Some(n)) => EffectiveThreads {
            count: n.get().min(MAX_THREADS),
            source: ThreadsSource::Detected,
        },
        (Threads::Auto, None) => EffectiveThreads {
            count: 1,
            source: ThreadsSource::Undetected,
        },
    }
}

/// The cores this process may use, asked once (the answer reads the cgroup files, which
/// should not happen on every move).
pub fn detected_cores() -> Option<NonZeroUsize> {
    static CORES: OnceLock<Option<NonZeroUsize>> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().ok())
}

impl Threads {
    /// Checks the bounds; the error is the reason (the caller names the key).
    pub fn validate(self) -> Result<(), String> {
        match self {
            Threads::Count(0) => Err("must be at least 1 (or \"auto\")".into()),
            Threads::Count(n) if n as usize > MAX_THREADS => {
                Err(format!("must be at most {MAX_THREADS} (or \"auto\")"))
            }
            _ => Ok(()),
        }
    }
}

impl Serialize for Threads {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threads::Auto => s.serialize_str("auto"),
            Threads::Count(n) => s.serialize_u32(*n),
        }
    }
}

/// Accepts a non-negative integer or `"auto"` (also as a string of digits, which is what an
/// environment override may arrive as). The errors name the key: this type is only
/// `search.threads`, and the configuration loader does not add the key to custom errors.
impl<'de> Deserialize<'de> for Threads {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        const EXPECTED: &str = "`search.threads`: a number of threads (1 or more) or \"auto\"";
        fn count<E: de::Error>(n: u64) -> Result<Threads, E> {
            u32::try_from(n)
                .map(Threads::Count)
                .map_err(|_| E::custom(format!("{EXPECTED}, not {n}")))
        }
        impl Visitor<'_> for V {
            type Value = Threads;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(EXPECTED)
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Threads, E> {
                count(n)
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Threads, E> {
                u64::try_from(n)
                    .map_err(|_| E::custom(format!("{EXPECTED}, not {n}")))
                    .and_then(count)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Threads, E> {
                let t = v.trim();
                if t.eq_ignore_ascii_case("auto") {
                    return Ok(Threads::Auto);
                }
                match t.parse::<u64>() {
                    Ok(n) => count(n),
                    Err(_) => Err(E::custom(format!("{EXPECTED}, not \"{v}\""))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nz(n: usize) -> Option<NonZeroUsize> {
        NonZeroUsize::new(n)
    }

    #[test]
    fn auto_is_the_detected_count() {
        // A 2-CPU container on a big host: std already applied the quota and the mask.
        assert_eq!(
            resolve(Threads::Auto, nz(2)),
            EffectiveThreads {
                count: 2,
                source: ThreadsSource::Detected
            }
        );
        assert_eq!(resolve(Threads::Auto, nz(1)).count, 1);
        assert_eq!(resolve(Threads::Auto, nz(1000)).count, MAX_THREADS);
    }

    #[test]
    fn auto_without_a_count_is_one_thread() {
        assert_eq!(
            resolve(Threads::Auto, None),
            EffectiveThreads {
                count: 1,
                source: ThreadsSource::Undetected
            }
        );
    }

    #[test]
    fn a_configured_count_wins_over_the_detected_one() {
        for detected in [None, nz(1), nz(64)] {
            assert_eq!(
                resolve(Threads::Count(3), detected),
                EffectiveThreads {
                    count: 3,
                    source: ThreadsSource::Configured
                }
            );
        }
    }

    #[test]
    fn bounds() {
        assert!(Threads::Auto.validate().is_ok());
        assert!(Threads::Count(1).validate().is_ok());
        assert!(Threads::Count(MAX_THREADS as u32).validate().is_ok());
        assert!(Threads::Count(0).validate().is_err());
        assert!(Threads::Count(MAX_THREADS as u32 + 1).validate().is_err());
    }

    #[test]
    fn the_source_is_said() {
        let auto = resolve(Threads::Auto, nz(4)).to_string();
        assert!(auto.starts_with("4 ") && auto.contains("cgroup"), "{auto}");
        let set = resolve(Threads::Count(3), nz(4)).to_string();
        assert!(
            set.starts_with("3 ") && set.contains("search.threads"),
            "{set}"
        );
    }

    #[test]
    fn the_detected_count_is_at_least_one_and_stable() {
        let first = detected_cores();
        assert_eq!(first, detected_cores());
        // This process may use at most the host's CPUs.
        if let (Some(n), Ok(host)) = (first, std::fs::read_to_string("/proc/cpuinfo")) {
            let cpus = host.lines().filter(|l| l.starts_with("processor")).count();
            assert!(cpus == 0 || n.get() <= cpus, "{n} > {cpus}");
        }
    }
}
