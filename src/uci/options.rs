//! The UCI options: what `uci` lists and what `setoption` changes.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::search::nnue::{Network, embedded};
use crate::search::{Algorithm, SearchConfig, params};

/// Default `Move Overhead` in milliseconds: enough for a local GUI or match runner; lichess
/// deployments should raise it to 100–300 (measured lichess-bot latency is 94–270 ms).
pub const DEFAULT_MOVE_OVERHEAD_MS: u64 = 50;

/// Current option values.
#[derive(Clone, Debug)]
pub struct Options {
    /// Search configuration (Hash, Threads, seed, randomisation and the tunable parameters).
    pub search: SearchConfig,
    /// Time lost per move outside the engine.
    pub move_overhead: Duration,
    /// Lines reported at the end of a search.
    pub multipv: usize,
    /// Whether the GUI may ask us to ponder (informational: `go ponder` works regardless).
    pub ponder: bool,
    /// Print `wdl` in info lines.
    pub show_wdl: bool,
    /// The `EvalFile` whose network evaluates: `<embedded>` (the default), `<linear>` (the
    /// linear evaluation) or a path.
    pub eval_file: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            search: SearchConfig::default(),
            move_overhead: Duration::from_millis(DEFAULT_MOVE_OVERHEAD_MS),
            multipv: 1,
            ponder: false,
            show_wdl: false,
            eval_file: embedded::NAME.to_owned(),
        }
    }
}

/// What a `setoption` asks the engine to do besides storing a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Only the stored value changed.
    None,
    /// Drop the search tree (`Clear Hash`).
    ClearTree,
}

impl Options {
    /// The `option ...` lines of the `uci` answer.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = vec![
            "option name UCI_Variant type combo default atomic var atomic".to_string(),
            format!(
                "option name SearchAlgorithm type combo default {} var alphabeta var mcts",
                Algorithm::default().name()
            ),
            format!(
                "option name Hash type spin default {} min 1 max 65536",
                SearchConfig::default().hash_mb
            ),
            "option name Threads type spin default 1 min 1 max 256".to_string(),
            format!(
                "option name Move Overhead type spin default {DEFAULT_MOVE_OVERHEAD_MS} min 0 max 10000"
            ),
            "option name MultiPV type spin default 1 min 1 max 256".to_string(),
            "option name Ponder type check default false".to_string(),
            "option name UCI_ShowWDL type check default false".to_string(),
            "option name Randomize type check default false".to_string(),
            "option name Seed type spin default 0 min 0 max 2147483647".to_string(),
            "option name Clear Hash type button".to_string(),
            format!(
                "option name EvalFile type string default {}",
                embedded::NAME
            ),
        ];
        let defaults = crate::search::SearchParams::default();
        for spec in params::PARAMS {
            lines.push(format!(
                "option name {} type spin default {} min {} max {}",
                spec.name,
                spec.spin(&defaults),
                spec.min,
                spec.max
            ));
        }
        lines
    }

    /// Applies `setoption name <name> value <value>`. `Err` names the problem; the options are
    /// unchanged then.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<Effect, String> {
        let lower = name.to_ascii_lowercase();
        match lower.as_str() {
            "uci_variant" => {
                let value = required(name, value)?;
                if value.eq_ignore_ascii_case("atomic") {
                    Ok(Effect::None)
                } else {
                    Err(format!(
                        "UCI_Variant '{value}' is not supported (only atomic)"
                    ))
                }
            }
            "searchalgorithm" => {
                let value = required(name, value)?;
                self.search.algorithm = Algorithm::parse(value).ok_or_else(|| {
                    format!("SearchAlgorithm '{value}' is not one of alphabeta, mcts")
                })?;
                Ok(Effect::None)
            }
            "hash" => {
                self.search.hash_mb = spin(name, value, 1, 65536)? as usize;
                Ok(Effect::None)
            }
            "threads" => {
                self.search.threads = spin(name, value, 1, 256)? as usize;
                Ok(Effect::None)
            }
            "move overhead" => {
                self.move_overhead = Duration::from_millis(spin(name, value, 0, 10_000)? as u64);
                Ok(Effect::None)
            }
            "multipv" => {
                self.multipv = spin(name, value, 1, 256)? as usize;
                Ok(Effect::None)
            }
            "ponder" => {
                self.ponder = check(name, value)?;
                Ok(Effect::None)
            }
            "uci_showwdl" => {
                self.show_wdl = check(name, value)?;
                Ok(Effect::None)
            }
            "randomize" => {
                self.search.randomize = check(name, value)?;
                Ok(Effect::None)
            }
            "seed" => {
                self.search.seed = spin(name, value, 0, i64::from(i32::MAX))? as u64;
                Ok(Effect::None)
            }
            "clear hash" => Ok(Effect::ClearTree),
            "evalfile" => {
                self.set_eval_file(value.unwrap_or("").trim())?;
                Ok(Effect::None)
            }
            // Options GUIs send to every engine; accepted and ignored.
            "uci_chess960" | "uci_analysemode" | "uci_limitstrength" | "uci_elo" => {
                Ok(Effect::None)
            }
            _ => {
                let spec = params::find(name).ok_or_else(|| format!("unknown option '{name}'"))?;
                let value = spin(name, value, spec.min, spec.max)?;
                spec.apply(&mut self.search.params, value);
                Ok(Effect::None)
            }
        }
    }
}

impl Options {
    /// Loads the network of `EvalFile` = `file`: `<embedded>` (or empty) the built-in network,
    /// `<linear>` (or `<empty>`, which meant it before the network was embedded) the linear
    /// evaluation, else a file. A file that does not load leaves the evaluation as it was.
    fn set_eval_file(&mut self, file: &str) -> Result<(), String> {
        if file.is_empty() || file == embedded::NAME {
            self.search.network = Some(embedded::network());
            embedded::NAME.clone_into(&mut self.eval_file);
            return Ok(());
        }
        if file == embedded::LINEAR || file == "<empty>" {
            self.search.network = None;
            embedded::LINEAR.clone_into(&mut self.eval_file);
            return Ok(());
        }
        if file == self.eval_file && self.search.network.is_some() {
            return Ok(());
        }
        let network = Network::load(Path::new(file)).map_err(|e| format!("EvalFile: {e}"))?;
        self.search.network = Some(Arc::new(network));
        self.eval_file = file.to_owned();
        Ok(())
    }
}

fn required<'a>(name: &str, value: Option<&'a str>) -> Result<&'a str, String> {
    value
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("option '{name}' needs a value"))
}

fn spin(name: &str, value: Option<&str>, min: i64, max: i64) -> Result<i64, String> {
    let value = required(name, value)?;
    let n: i64 = value
        .trim()
        .parse()
        .map_err(|_| format!("option '{name}': '{value}' is not a number"))?;
    if n < min || n > max {
        return Err(format!("option '{name}': {n} is outside {min}..{max}"));
    }
    Ok(n)
}

fn check(name: &str, value: Option<&str>) -> Result<bool, String> {
    match required(name, value)?.to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(format!("option '{name}': '{other}' is not true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_variant_first_and_every_param() {
        let lines = Options::default().describe();
        assert_eq!(
            lines[0],
            "option name UCI_Variant type combo default atomic var atomic"
        );
        for spec in params::PARAMS {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("option name {} type spin", spec.name)))
            );
        }
        for name in [
            "Hash",
            "Threads",
            "Move Overhead",
            "MultiPV",
            "Ponder",
            "UCI_ShowWDL",
        ] {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("option name {name} type"))),
                "{name}"
            );
        }
    }

    #[test]
    fn sets_values_and_rejects_bad_ones() {
        let mut options = Options::default();
        assert_eq!(options.set("Hash", Some("16")), Ok(Effect::None));
        assert_eq!(options.search.hash_mb, 16);
        assert!(options.set("move overhead", Some("250")).is_ok());
        assert_eq!(options.move_overhead, Duration::from_millis(250));
        assert!(options.set("UCI_ShowWDL", Some("true")).is_ok());
        assert!(options.show_wdl);
        assert!(options.set("CPuct", Some("200")).is_ok());
        assert_eq!(options.search.params.cpuct, 2.0);
        assert!(options.set("UCI_Variant", Some("atomic")).is_ok());
        assert!(options.set("UCI_Variant", Some("chess")).is_err());
        assert!(options.set("Hash", Some("zero")).is_err());
        assert!(options.set("Hash", Some("0")).is_err());
        assert!(options.set("Hash", None).is_err());
        assert!(options.set("Ponder", Some("maybe")).is_err());
        assert!(options.set("Nonsense", Some("1")).is_err());
        assert_eq!(options.search.hash_mb, 16);
        assert_eq!(options.set("Clear Hash", None), Ok(Effect::ClearTree));
    }

    #[test]
    fn eval_file_loads_a_network_keeps_the_old_one_on_an_error_and_names_embedded_or_linear() {
        let dir = tempfile::tempdir().expect("temp dir");
        let good = dir.path().join("net.nnue");
        std::fs::write(&good, Network::random(16, 1, 2).to_bytes()).expect("written");
        let mut options = Options::default();
        let embedded_net = options
            .search
            .network
            .clone()
            .expect("the embedded network");
        assert!(Arc::ptr_eq(&embedded_net, &embedded::network()));
        assert!(
            options
                .describe()
                .iter()
                .any(|l| l == "option name EvalFile type string default <embedded>")
        );
        let path = good.display().to_string();
        assert_eq!(options.set("EvalFile", Some(&path)), Ok(Effect::None));
        let loaded = options.search.network.clone().expect("a network");
        assert_eq!(loaded.hidden(), 16);

        let mut bytes = Network::random(16, 1, 2).to_bytes();
        bytes[60] ^= 1;
        let bad = dir.path().join("bad.nnue");
        std::fs::write(&bad, bytes).expect("written");
        let e = options
            .set("EvalFile", Some(&bad.display().to_string()))
            .expect_err("refused");
        assert!(e.contains("bad.nnue") && e.contains("hash"), "{e}");
        let missing = options
            .set("EvalFile", Some("/no/such/net.nnue"))
            .expect_err("refused");
        assert!(missing.contains("/no/such/net.nnue"), "{missing}");
        let kept = options.search.network.clone().expect("still the network");
        assert!(Arc::ptr_eq(&kept, &loaded));

        assert!(options.set("EvalFile", Some("<linear>")).is_ok());
        assert!(options.search.network.is_none());
        assert!(options.set("EvalFile", Some(&path)).is_ok());
        assert!(options.set("EvalFile", Some("<empty>")).is_ok());
        assert!(
            options.search.network.is_none(),
            "<empty> meant linear and still does"
        );
        assert!(options.set("EvalFile", None).is_ok());
        let back = options
            .search
            .network
            .clone()
            .expect("empty: the embedded network");
        assert!(Arc::ptr_eq(&back, &embedded_net));
        assert!(options.set("EvalFile", Some("<embedded>")).is_ok());
        assert_eq!(options.eval_file, "<embedded>");
    }
}
