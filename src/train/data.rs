//! Training samples in memory: compact feature lists read from datagen's files.
//!
//! A record becomes the sorted input indices of its units from White's perspective (`u16`
//! each, about 30 a position) plus the side to move, score and result: about 70 bytes a sample,
//! so a few million samples fit in a few hundred MB. Black's perspective is derived on the fly
//! ([`flip`]): it is the same unit seen with colours swapped and the board mirrored.

use std::fmt;
use std::path::{Path, PathBuf};

use arrayvec::ArrayVec;
use atomic_chess::{Color, Role, Square};

use crate::search::nnue::features::KingLayout;

use crate::datagen::record::{self, DataError, RECORD_BYTES};

/// Inputs per perspective of the plain layout: colour (own, other) × role × square. A
/// king-keyed network has this many per king bucket ([`Dataset::inputs`] keys them).
pub const INPUTS: usize = 768;

/// The input of a unit of colour `c`, role `r` on square `s` seen from perspective `p`.
pub fn feature(perspective: Color, color: Color, role: usize, square: usize) -> u16 {
    let other = usize::from(color != perspective);
    let sq = if perspective == Color::White {
        square
    } else {
        square ^ 56
    };
    ((other * 6 + role) * 64 + sq) as u16
}

/// The same unit's input from the other perspective: swap the colour half and mirror the rank.
pub fn flip(f: u16) -> u16 {
    let swapped = if f < 384 { f + 384 } else { f - 384 };
    swapped ^ 56
}

/// The output bucket of a position with `pieces` units on the board.
pub fn bucket(pieces: usize, buckets: usize) -> usize {
    (pieces.saturating_sub(2) * buckets / 31).min(buckets - 1)
}

/// Why the data could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// A file could not be read.
    Io(PathBuf, std::io::Error),
    /// A file is not a valid data file; the record number when the fault is in one.
    Bad(PathBuf, Option<usize>, DataError),
    /// No data files were given or found.
    Empty(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            LoadError::Bad(path, None, e) => write!(f, "{}: {e}", path.display()),
            LoadError::Bad(path, Some(n), e) => write!(f, "{}: record {n}: {e}", path.display()),
            LoadError::Empty(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// Every sample of the loaded files, in file order.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    /// White-perspective inputs of all samples, back to back.
    features: Vec<u16>,
    /// Where each sample's inputs start in `features`; one entry more than samples.
    offsets: Vec<u32>,
    /// Side to move: 0 White, 1 Black.
    turn: Vec<u8>,
    /// Search score in centipawns, side to move's view.
    score: Vec<i16>,
    /// Result for the side to move: 0 loss, 1 draw, 2 win.
    result: Vec<u8>,
}

/// One sample's inputs seen from the side to move (`us`) and the other side (`them`).
pub struct Inputs {
    /// The side to move's perspective.
    pub us: ArrayVec<u16, 32>,
    /// The other side's perspective.
    pub them: ArrayVec<u16, 32>,
}

impl Dataset {
    /// An empty dataset, with the first offset in place.
    pub fn new() -> Self {
        Dataset {
            offsets: vec![0],
            ..Dataset::default()
        }
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.turn.len()
    }

    /// Whether no sample is held.
    pub fn is_empty(&self) -> bool {
        self.turn.is_empty()
    }

    /// Adds every record of one file's bytes (header included); `cap` stops early. With
    /// `mirror`, each record also gives its mirror image across the d/e line (files a↔h): atomic
    /// rules are symmetric under it but for castling, which the inputs do not show, so the
    /// mirror is a second, valid sample with the same targets (it doubles small data sets). The
    /// two are adjacent, so validation blocks never split a pair.
    pub fn add_file(
        &mut self,
        bytes: &[u8],
        cap: usize,
        mirror: bool,
    ) -> Result<(), (Option<usize>, DataError)> {
        let body = record::records(bytes).map_err(|e| (None, e))?;
        for (n, rec) in body.chunks_exact(RECORD_BYTES).enumerate() {
            if self.len() >= cap {
                break;
            }
            let sample = record::decode(rec).map_err(|e| (Some(n), e))?;
            if sample.pieces.len() < 2 {
                return Err((Some(n), DataError::Record("fewer than two units")));
            }
            for flip_files in [false, true].into_iter().take(1 + usize::from(mirror)) {
                for &(color, role, sq) in &sample.pieces {
                    let sq = sq.index() ^ if flip_files { 7 } else { 0 };
                    self.features
                        .push(feature(Color::White, color, role.index(), sq));
                }
                self.offsets.push(self.features.len() as u32);
                self.turn.push(sample.turn.index() as u8);
                self.score.push(sample.score);
                self.result.push(sample.result as u8);
            }
        }
        Ok(())
    }

    /// Reads the files in order (a directory stands for its `*.bin` files, sorted by name),
    /// each record with its mirror image too when `mirror` (see [`Dataset::add_file`]).
    pub fn load(
        paths: &[PathBuf],
        cap: usize,
        mirror: bool,
    ) -> Result<(Dataset, Vec<PathBuf>), LoadError> {
        let files = expand(paths)?;
        let mut data = Dataset::new();
        for path in &files {
            if data.len() >= cap {
                break;
            }
            let bytes = std::fs::read(path).map_err(|e| LoadError::Io(path.clone(), e))?;
            data.add_file(&bytes, cap, mirror)
                .map_err(|(n, e)| LoadError::Bad(path.clone(), n, e))?;
        }
        if data.is_empty() {
            return Err(LoadError::Empty("the data files hold no positions".into()));
        }
        Ok((data, files))
    }

    /// Sample `i`'s inputs from both perspectives, keyed by each perspective's king as the
    /// network's layout `kings` says (the dataset holds plain inputs; keyed ones are derived
    /// per sample, so one dataset serves networks of every layout).
    pub fn inputs(&self, i: usize, kings: KingLayout) -> Inputs {
        let own = &self.features[self.offsets[i] as usize..self.offsets[i + 1] as usize];
        let mut white: ArrayVec<u16, 32> = own.iter().copied().collect();
        let mut black: ArrayVec<u16, 32> = own.iter().map(|&f| flip(f)).collect();
        if kings != KingLayout::Plain {
            // Each king's square from White's inputs: its role's 64 inputs of its colour.
            let king = |color: Color| {
                let first = feature(Color::White, color, Role::King.index(), 0);
                own.iter()
                    .find(|&&f| (first..first + 64).contains(&f))
                    .map(|&f| Square::new(u32::from(f - first)))
            };
            let keys = [
                kings.key(Color::White, king(Color::White)),
                kings.key(Color::Black, king(Color::Black)),
            ];
            for (inputs, key) in [(&mut white, keys[0]), (&mut black, keys[1])] {
                for f in inputs.iter_mut() {
                    *f = key.apply(usize::from(*f)) as u16;
                }
            }
        }
        if self.turn[i] == 0 {
            Inputs {
                us: white,
                them: black,
            }
        } else {
            Inputs {
                us: black,
                them: white,
            }
        }
    }

    /// Units on the board in sample `i`.
    pub fn pieces(&self, i: usize) -> usize {
        (self.offsets[i + 1] - self.offsets[i]) as usize
    }

    /// Sample `i`'s training target: `wdl · result + (1 − wdl) · sigmoid(score / 400)`.
    pub fn target(&self, i: usize, wdl: f32) -> f32 {
        let result = f32::from(self.result[i]) / 2.0;
        let score = sigmoid(f32::from(self.score[i]) / 400.0);
        wdl * result + (1.0 - wdl) * score
    }
}

/// The logistic function.
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The files named, a directory standing for its `*.bin` files (sorted by name).
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, LoadError> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| LoadError::Io(path.clone(), e))?
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|p| p.extension().is_some_and(|ext| ext == "bin") && p.is_file())
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    if files.is_empty() {
        let named: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(LoadError::Empty(format!(
            "no data files in {}",
            if named.is_empty() {
                "(none given)".to_string()
            } else {
                named.join(", ")
            }
        )));
    }
    Ok(files)
}

/// A path's last component for the summary (the whole path where it has none).
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The file names for the summary: all of them when few, else the first and the last.
pub fn describe(files: &[PathBuf]) -> String {
    let name = |p: &PathBuf| file_name(p);
    match files {
        [first, _, _, _, .., last] => format!("{} … {}", name(first), name(last)),
        _ => files.iter().map(name).collect::<Vec<_>>().join(" "),
    }
}
