//! `atomic-bot train`: fits the evaluation network (issue #30) to datagen's positions on the
//! CPU and writes the quantised file the engine loads.
//!
//! [`data`] reads the records into compact feature lists, [`model`] is the float network with
//! its forward and backward passes, [`optim`] the AdamW optimiser, [`trainer`] the threaded
//! loop and [`export`] the file format with the engine's integer forward pass (to test that
//! quantisation keeps the evaluation).

pub mod data;
pub mod export;
pub mod model;
pub mod optim;
pub mod trainer;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use crate::search::nnue::features::KingLayout;

use data::{Dataset, LoadError, file_name};
use trainer::Options;

/// The trainer's own version, written into the networks table beside the crate version: bump it
/// when a change to the trainer changes what a run produces.
pub const TRAINER_VERSION: u32 = 1;

/// Arguments of `atomic-bot train`.
#[derive(Args, Debug, Clone)]
pub struct TrainArgs {
    /// A data file from `atomic-bot datagen`, or a directory (every `*.bin` in it); repeatable.
    #[arg(long, required = true)]
    pub data: Vec<PathBuf>,
    /// The network file to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Neurons of the feature transformer per perspective (a multiple of 16, 16 to 2048).
    #[arg(long, default_value_t = 256)]
    pub hidden: usize,
    /// Output buckets by material (1 to 16).
    #[arg(long, default_value_t = 8)]
    pub buckets: usize,
    /// Inputs keyed by the perspective's king: `plain` (768 a perspective) or `mirrored8`
    /// (eight king buckets, the board mirrored to put the king on files a–d; trained with a
    /// factoriser). See docs/NNUE.md.
    #[arg(long, default_value = "plain")]
    pub kings: String,
    /// Passes over the data.
    #[arg(long, default_value_t = 10)]
    pub epochs: usize,
    /// Samples per optimiser step.
    #[arg(long, default_value_t = 16384)]
    pub batch: usize,
    /// Learning rate at the start (cosine decay to 1 % of it by the end).
    #[arg(long, default_value_t = 0.003)]
    pub lr: f32,
    /// Weight of the game result in the target; the rest is the search score. 0.05: in games
    /// at equal nodes against the linear evaluation, networks trained at 0.4 / 0.2 / 0.05 on the
    /// same data scored +37 / +125 / +147 Elo (docs/NNUE.md).
    #[arg(long, default_value_t = 0.05)]
    pub wdl: f32,
    /// Exponent of the loss |sigmoid(out) − target|^power.
    #[arg(long, default_value_t = 2.0)]
    pub power: f32,
    /// Worker threads (default: every core this process may use).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Seed of the initial weights and the shuffles.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Read at most this many positions (files in order).
    #[arg(long)]
    pub max_samples: Option<usize>,
    /// Also learn from each position's mirror image (files a↔h): twice the samples.
    #[arg(long)]
    pub mirror: bool,
    /// Write the network after every epoch into this directory (`epoch-N.nnue`).
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Start from this network file's weights instead of random ones (fine-tuning an existing
    /// network on new data, usually with a smaller --lr); its shape must match --hidden,
    /// --buckets and --kings.
    #[arg(long)]
    pub init: Option<PathBuf>,
}

/// Why a run failed.
#[derive(Debug)]
pub enum TrainError {
    /// Nonsensical arguments.
    Usage(String),
    /// The data could not be loaded.
    Data(LoadError),
    /// A network file could not be written.
    Write(PathBuf, std::io::Error),
    /// The `--init` network could not be used.
    Init(PathBuf, String),
}

impl fmt::Display for TrainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrainError::Usage(why) => write!(f, "train: {why}"),
            TrainError::Data(e) => write!(f, "train: {e}"),
            TrainError::Write(path, e) => write!(f, "train: cannot write {}: {e}", path.display()),
            TrainError::Init(path, why) => write!(f, "train: --init {}: {why}", path.display()),
        }
    }
}

impl std::error::Error for TrainError {}

impl TrainArgs {
    /// The training options, checked.
    pub fn options(&self) -> Result<Options, TrainError> {
        let usage = |why: String| Err(TrainError::Usage(why));
        if !self.hidden.is_multiple_of(16) || !(16..=2048).contains(&self.hidden) {
            return usage(format!(
                "--hidden {} is not a multiple of 16 in 16..=2048",
                self.hidden
            ));
        }
        if !(1..=16).contains(&self.buckets) {
            return usage(format!("--buckets {} is not in 1..=16", self.buckets));
        }
        let kings = match self.kings.as_str() {
            "plain" => KingLayout::Plain,
            "mirrored8" => KingLayout::Mirrored8,
            other => {
                return usage(format!(
                    "--kings {other:?} is not a king layout (plain or mirrored8)"
                ));
            }
        };
        if self.epochs == 0 || self.batch == 0 {
            return usage("--epochs and --batch must be positive".into());
        }
        if !(0.0..=1.0).contains(&self.wdl) {
            return usage(format!("--wdl {} is not in 0..=1", self.wdl));
        }
        let sane =
            self.lr > 0.0 && self.lr.is_finite() && self.power >= 1.0 && self.power.is_finite();
        if !sane {
            return usage("--lr must be positive and --power at least 1".into());
        }
        let threads = self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
        });
        if threads == 0 {
            return usage("--threads must be positive".into());
        }
        Ok(Options {
            kings,
            hidden: self.hidden,
            buckets: self.buckets,
            epochs: self.epochs,
            batch: self.batch,
            lr: self.lr,
            wdl: self.wdl,
            power: self.power,
            threads,
            seed: self.seed,
            val_every: 50,
            val_block: 64,
        })
    }
}

/// Writes a network file whole (to a temporary name, then renamed, so that a reader never sees
/// half a file); returns its size and hash.
pub fn write_net(net: &model::Network, path: &Path) -> Result<(usize, u64), TrainError> {
    let bytes = export::to_bytes(net);
    let hash = u64::from_le_bytes(bytes[40..48].try_into().expect("8 bytes"));
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".part");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, &bytes).map_err(|e| TrainError::Write(tmp.clone(), e))?;
    std::fs::rename(&tmp, path).map_err(|e| TrainError::Write(path.to_path_buf(), e))?;
    Ok((bytes.len(), hash))
}

/// The `--init` network as the float model, checked against the options' shape.
fn initial_network(path: &Path, opts: &Options) -> Result<model::Network, TrainError> {
    let fail = |why: String| TrainError::Init(path.to_path_buf(), why);
    let file = crate::search::nnue::Network::load(path).map_err(|e| fail(e.to_string()))?;
    let net = export::dequantise(&file.to_quantised()).map_err(fail)?;
    let mismatch = [
        ("hidden", net.hidden, opts.hidden),
        ("buckets", net.buckets, opts.buckets),
    ]
    .into_iter()
    .find(|(_, file, ours)| file != ours);
    if let Some((field, file, ours)) = mismatch {
        return Err(fail(format!("{field} is {file}, but --{field} is {ours}")));
    }
    if net.kings != opts.kings {
        return Err(fail(format!(
            "the inputs are keyed {:?}, but --kings asks for {:?}",
            net.kings, opts.kings
        )));
    }
    Ok(net)
}

/// Loads the data, trains, prints every epoch and writes the network; returns the one-line
/// summary for the networks table.
pub fn run(args: &TrainArgs) -> Result<String, TrainError> {
    let opts = args.options()?;
    let init = match &args.init {
        Some(path) => Some((path, initial_network(path, &opts)?)),
        None => None,
    };
    let start = Instant::now();
    let cap = args.max_samples.unwrap_or(usize::MAX);
    let (data, files) = Dataset::load(&args.data, cap, args.mirror).map_err(TrainError::Data)?;
    // Blocks of 64 positions (about two games), smaller when the data is too small for them.
    let opts = Options {
        val_block: (data.len() / (opts.val_every * 8)).clamp(1, 64),
        ..opts
    };
    let (train_set, val_set) = trainer::split(data.len(), opts.val_every, opts.val_block);
    if train_set.is_empty() || val_set.is_empty() {
        return Err(TrainError::Usage(format!(
            "{} positions are too few to hold out a validation set",
            data.len()
        )));
    }
    println!(
        "train: {} positions from {} files ({} train, {} validation) loaded in {:.1} s",
        data.len(),
        files.len(),
        train_set.len(),
        val_set.len(),
        start.elapsed().as_secs_f64()
    );
    println!(
        "train: kings {:?}, hidden {}, buckets {}, epochs {}, batch {}, lr {}, wdl {}, power {}, threads {}, seed {}",
        opts.kings,
        opts.hidden,
        opts.buckets,
        opts.epochs,
        opts.batch,
        opts.lr,
        opts.wdl,
        opts.power,
        opts.threads,
        opts.seed
    );
    println!(
        "train: baseline (mean target) validation loss {:.6}",
        trainer::baseline_loss(&data, &train_set, &val_set, &opts)
    );
    if let Some(dir) = &args.checkpoint {
        std::fs::create_dir_all(dir).map_err(|e| TrainError::Write(dir.clone(), e))?;
    }
    let mut last_val = f64::NAN;
    let mut best = (f64::INFINITY, 0);
    let mut checkpoint_error = None;
    let first = match init {
        Some((path, net)) => {
            println!(
                "train: starting from {}, validation loss {:.6} before training",
                path.display(),
                trainer::mean_loss(&net, &data, &val_set, &opts)
            );
            net
        }
        None => model::Network::random(opts.kings, opts.hidden, opts.buckets, opts.seed),
    };
    let net = trainer::train_from(first, &data, &opts, |epoch, net| {
        last_val = epoch.val_loss;
        if epoch.val_loss < best.0 {
            best = (epoch.val_loss, epoch.number);
        }
        println!(
            "epoch {:>3}/{}: train loss {:.6}, validation loss {:.6}, {:.0} samples/s, lr {:.2e}, elapsed {:.1} s",
            epoch.number,
            opts.epochs,
            epoch.train_loss,
            epoch.val_loss,
            epoch.samples_per_s,
            epoch.lr,
            epoch.elapsed_s
        );
        if let Some(dir) = &args.checkpoint {
            let path = dir.join(format!("epoch-{}.nnue", epoch.number));
            if let Err(e) = write_net(net, &path) {
                eprintln!("{e}");
                checkpoint_error.get_or_insert(e);
            }
        }
    });
    let (size, hash) = write_net(&net, &args.out)?;
    let (mean, worst) = export::quantisation_error(&net, &data, &val_set);
    println!(
        "train: quantised vs float on the {} validation positions: mean {mean:.2} cp, max {worst:.2} cp",
        val_set.len()
    );
    println!(
        "train: wrote {} ({size} bytes, hash {hash:016x}) in {:.1} s",
        args.out.display(),
        start.elapsed().as_secs_f64()
    );
    println!(
        "train: lowest validation loss {:.6} after epoch {}{}",
        best.0,
        best.1,
        if args.checkpoint.is_some() {
            format!(" (checkpoint epoch-{}.nnue)", best.1)
        } else {
            String::new()
        }
    );
    if let Some(e) = checkpoint_error {
        eprintln!("train: warning: a checkpoint could not be written ({e})");
    }
    Ok(format!(
        "| {} | {hash:016x} | {}{} ({} files) | {} positions | {} epochs | kings {:?} | hidden {} | buckets {} | λ {} | val loss {last_val:.6} | trainer {} |",
        file_name(&args.out),
        args.init
            .as_deref()
            .map_or(String::new(), |p| format!("from {}: ", file_name(p))),
        data::describe(&files),
        files.len(),
        data.len(),
        opts.epochs,
        opts.kings,
        opts.hidden,
        opts.buckets,
        opts.wdl,
        trainer_version()
    ))
}

/// The crate version, the trainer version and the git commit the binary was built from when the
/// build recorded one (`ATOMIC_BOT_GIT_COMMIT` at build time).
pub fn trainer_version() -> String {
    let base = format!(
        "atomic-bot {} train-v{TRAINER_VERSION}",
        env!("CARGO_PKG_VERSION")
    );
    match option_env!("ATOMIC_BOT_GIT_COMMIT") {
        Some(commit) => format!("{base} ({commit})"),
        None => base,
    }
}

#[cfg(test)]
mod tests;
