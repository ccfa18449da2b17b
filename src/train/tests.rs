//! Tests of the trainer on small data made here: positions from random play, scored by a
//! material count the network can learn.

use std::path::PathBuf;

use atomic_chess::{Color, Position, Role};

use super::data::{Dataset, INPUTS, Inputs, LoadError, bucket, feature, flip, sigmoid};
use super::export::{self, QuantNet};
use super::model::{Network, Rng, Scratch};
use super::trainer::{self, Options, mean_loss, split, train};
use super::{TrainArgs, run};
use crate::datagen::record::{self, DataError, GameResult};
use crate::search::nnue::Network as EngineNetwork;
use crate::search::nnue::Stack;
use crate::search::nnue::features::KingLayout;
use crate::search::nnue::format::fnv1a;

/// Material of the side to move minus the other's, in centipawns.
fn material(pos: &Position) -> i32 {
    const VALUE: [i32; 6] = [100, 300, 300, 500, 900, 0];
    let board = pos.board();
    let side = |c: Color| -> i32 {
        Role::ALL
            .iter()
            .map(|&r| VALUE[r.index()] * (board.by_role(r) & board.by_color(c)).count() as i32)
            .sum()
    };
    side(pos.turn()) - side(pos.turn().other())
}

/// `n` records from random games: score = material, result = its sign.
fn records(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = record::header().to_vec();
    let mut pos = Position::startpos();
    let mut written = 0;
    while written < n {
        let moves = pos.legal_moves();
        if moves.is_empty() || !pos.has_both_kings() || rng.below(80) == 0 {
            pos = Position::startpos();
            continue;
        }
        let m = moves[rng.below(moves.len())];
        let score = material(&pos);
        let result = match score.signum() {
            1 => GameResult::Win,
            0 => GameResult::Draw,
            _ => GameResult::Loss,
        };
        out.extend_from_slice(&record::encode(&pos, score, result, m));
        written += 1;
        pos = pos.play(m).expect("legal move");
    }
    out
}

fn dataset(n: usize, seed: u64) -> Dataset {
    let mut data = Dataset::new();
    data.add_file(&records(n, seed), usize::MAX, false)
        .expect("valid records");
    data
}

/// A network of this shape trained on `data` with [`small_options`].
fn trained(
    data: &Dataset,
    kings: KingLayout,
    hidden: usize,
    buckets: usize,
    epochs: usize,
) -> Network {
    let opts = Options {
        kings,
        hidden,
        buckets,
        epochs,
        ..small_options()
    };
    train(data, &opts, |_, _| {})
}

fn small_options() -> Options {
    Options {
        kings: KingLayout::Plain,
        hidden: 32,
        buckets: 2,
        epochs: 8,
        batch: 64,
        lr: 0.01,
        wdl: 0.4,
        power: 2.0,
        threads: 1,
        seed: 7,
        val_every: 10,
        val_block: 1,
    }
}

#[test]
fn inputs_follow_the_documented_indexing_and_perspectives_mirror() {
    // A white pawn on e2 (square 12) from White: own pawn, e2.
    assert_eq!(feature(Color::White, Color::White, 0, 12), 12);
    // From Black: the other side's pawn, on e7 (12 ^ 56 = 52).
    assert_eq!(
        feature(Color::Black, Color::White, 0, 12),
        (6 * 64 + 52) as u16
    );
    // A black king on e8 (60) from White: other side's king.
    assert_eq!(
        feature(Color::White, Color::Black, 5, 60),
        (11 * 64 + 60) as u16
    );
    for f in 0..INPUTS as u16 {
        assert_eq!(flip(flip(f)), f);
        let (other, role, sq) = (
            usize::from(f) / 384,
            usize::from(f) / 64 % 6,
            usize::from(f) % 64,
        );
        let color = if other == 0 {
            Color::White
        } else {
            Color::Black
        };
        assert_eq!(flip(f), feature(Color::Black, color, role, sq));
    }
    assert_eq!(bucket(2, 8), 0);
    assert_eq!(bucket(32, 8), 7);
    assert_eq!(bucket(17, 8), 3);
    assert_eq!(bucket(32, 1), 0);
    // The side to move's list comes first: Black to move sees its own units as "own".
    let data = dataset(40, 3);
    for i in 0..data.len() {
        let Inputs { us, them } = data.inputs(i, KingLayout::Plain);
        assert_eq!(us.len(), them.len());
        assert!(us.iter().zip(&them).all(|(&u, &t)| flip(u) == t));
    }
}

#[test]
fn validation_holds_out_whole_blocks() {
    let (train_set, val) = split(1000, 5, 10);
    assert_eq!(val.len(), 200);
    assert_eq!(train_set.len(), 800);
    assert_eq!(
        &val[..12],
        &[40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 90, 91]
    );
    assert!(train_set.iter().all(|i| !val.contains(i)));
}

#[test]
fn the_gradient_matches_finite_differences() {
    gradient_matches_finite_differences(KingLayout::Plain);
}

#[test]
fn the_gradient_of_a_king_keyed_network_reaches_its_rows_and_the_factoriser() {
    gradient_matches_finite_differences(KingLayout::Mirrored8);
}

fn gradient_matches_finite_differences(kings: KingLayout) {
    let data = dataset(6, 11);
    let mut net = Network::random(kings, 16, 2, 5);
    // Keyed, the bucket rows start at zero: give them values of their own.
    let rows = net.factor_at();
    for (k, p) in net.params[..rows].iter_mut().enumerate() {
        if kings != KingLayout::Plain {
            *p = 0.01 * (k % 7) as f32 - 0.03;
        }
    }
    // Spread the biases so that several neurons sit inside SCReLU's curved range.
    let (from, to) = (net.ft_bias_at(), net.out_weights_at());
    for (k, p) in net.params[from..to].iter_mut().enumerate() {
        *p = 0.1 + 0.05 * (k % 8) as f32;
    }
    let mut scratch = Scratch::new(16);
    let mut checked = 0;
    for i in 0..data.len() {
        let inputs = data.inputs(i, kings);
        let b = bucket(data.pieces(i), 2);
        let mut grad = vec![0.0f32; net.params.len()];
        net.forward(&inputs, b, &mut scratch);
        net.backward(&inputs, b, 1.0, &mut scratch, &mut grad);
        let row = usize::from(inputs.us[0]) * 16;
        let factor = net.factor_at() + (usize::from(inputs.them[2]) % INPUTS) * 16;
        let probes = [
            row + 3,
            row + 9,
            usize::from(inputs.them[1]) * 16 + 4,
            // Keyed: a factoriser row (plain: the transformer bias, probed again).
            if net.factorised() {
                factor + 6
            } else {
                net.ft_bias_at() + 6
            },
            net.ft_bias_at() + 2,
            net.ft_bias_at() + 13,
            net.out_weights_at() + b * 32 + 5,
            net.out_weights_at() + b * 32 + 16 + 7,
            net.out_bias_at() + b,
        ];
        for &k in &probes {
            let eps = 1e-3;
            let keep = net.params[k];
            net.params[k] = keep + eps;
            let up = net.forward(&inputs, b, &mut scratch);
            net.params[k] = keep - eps;
            let down = net.forward(&inputs, b, &mut scratch);
            net.params[k] = keep;
            let numeric = (up - down) / (2.0 * eps);
            assert!(
                (numeric - grad[k]).abs() <= 2e-3 + 0.02 * numeric.abs(),
                "sample {i} parameter {k}: analytic {} numeric {numeric}",
                grad[k]
            );
            checked += usize::from(grad[k] != 0.0);
        }
    }
    assert!(checked > 20, "only {checked} non-zero gradients probed");
}

#[test]
fn the_loss_falls_on_a_small_dataset_and_beats_the_mean() {
    let data = dataset(500, 1);
    let opts = small_options();
    let (train_set, val) = split(data.len(), opts.val_every, opts.val_block);
    let baseline = trainer::baseline_loss(&data, &train_set, &val, &opts);
    let mut epochs = Vec::new();
    let net = train(&data, &opts, |e, _| epochs.push(*e));
    assert_eq!(epochs.len(), opts.epochs);
    let (first, last) = (epochs[0], epochs[opts.epochs - 1]);
    assert!(last.train_loss < 0.6 * first.train_loss, "{epochs:?}");
    assert!(
        last.val_loss < baseline,
        "val {} vs baseline {baseline}",
        last.val_loss
    );
    assert_eq!(mean_loss(&net, &data, &val, &opts), last.val_loss);
}

#[test]
fn training_is_deterministic_for_a_seed_on_one_thread() {
    let data = dataset(200, 2);
    let opts = Options {
        epochs: 2,
        ..small_options()
    };
    let a = train(&data, &opts, |_, _| {});
    let b = train(&data, &opts, |_, _| {});
    assert_eq!(a, b);
    let c = train(
        &data,
        &Options {
            seed: 8,
            ..opts.clone()
        },
        |_, _| {},
    );
    assert_ne!(a, c);
    // Two threads split each batch differently but train the same model.
    let two = train(
        &data,
        &Options {
            threads: 2,
            ..opts.clone()
        },
        |_, _| {},
    );
    let (_, val) = split(data.len(), opts.val_every, opts.val_block);
    let (la, l2) = (
        mean_loss(&a, &data, &val, &opts),
        mean_loss(&two, &data, &val, &opts),
    );
    assert!((la - l2).abs() < 1e-3 * la.max(1e-3), "{la} vs {l2}");
}

#[test]
fn quantised_and_float_evaluations_agree_for_random_and_trained_networks() {
    quantised_and_float_agree(KingLayout::Plain);
    quantised_and_float_agree(KingLayout::Mirrored8);
}

fn quantised_and_float_agree(kings: KingLayout) {
    let data = dataset(300, 4);
    let random = Network::random(kings, 64, 4, 9);
    let trained = trained(&data, kings, 64, 4, 10);
    for (name, net) in [("random", &random), ("trained", &trained)] {
        let all: Vec<u32> = (0..data.len() as u32).collect();
        let (mean, worst) = export::quantisation_error(net, &data, &all);
        println!("{name}: max {worst:.2} cp, mean {mean:.2} cp");
        assert!(
            worst <= 30.0 && mean <= 8.0,
            "{name}: max {worst} cp, mean {mean} cp"
        );
    }
    let mut scratch = Scratch::new(64);
    let spread = (0..data.len())
        .map(|i| {
            trained
                .forward(
                    &data.inputs(i, kings),
                    bucket(data.pieces(i), 4),
                    &mut scratch,
                )
                .abs()
        })
        .fold(0.0f32, f32::max);
    assert!(
        spread * 400.0 > 100.0,
        "the trained net says almost nothing: {spread}"
    );
}

#[test]
fn the_file_has_the_documented_layout_and_parses_back() {
    let mut net = Network::random(KingLayout::Plain, 32, 3, 1);
    let ob = net.out_bias_at();
    net.params[ob] = 0.5;
    net.params[ob + 2] = -1.25;
    let bytes = export::to_bytes(&net);
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
    assert_eq!(&bytes[..8], b"ATOMNNUE");
    let fields: Vec<u32> = (0..8).map(|i| word(8 + 4 * i)).collect();
    assert_eq!(fields, [1, 768, 32, 3, 255, 64, 400, 0]);
    let payload_len = 2 * (768 * 32 + 32 + 3 * 64) + 4 * 3;
    assert_eq!(bytes.len(), 48 + payload_len);
    let hash = u64::from_le_bytes(bytes[40..48].try_into().expect("8"));
    assert_eq!(hash, fnv1a(&bytes[48..]));
    let i16_at = |at: usize| i16::from_le_bytes([bytes[at], bytes[at + 1]]);
    // ft_weights[5][7], ft_bias, out_weights[1][40], out_bias[2].
    assert_eq!(
        i16_at(48 + 2 * (5 * 32 + 7)),
        (net.params[5 * 32 + 7] * 255.0).round() as i16
    );
    let w = net.params[net.out_weights_at() + 64 + 40];
    assert_eq!(
        i16_at(48 + 2 * (768 * 32 + 32 + 64 + 40)),
        (w * 64.0).round() as i16
    );
    let tail = bytes.len() - 4;
    assert_eq!(
        i32::from_le_bytes(bytes[tail..].try_into().expect("4")),
        -20400
    );
    let q = QuantNet::parse(&bytes).expect("parses");
    assert_eq!((q.hidden, q.buckets, q.hash), (32, 3, hash));
    assert_eq!(q.out_bias, [8160, 0, -20400]);

    // The engine's reader checks the trainer's files (its own tests cover every field).
    let field = |b: &[u8]| QuantNet::parse(b).map(|_| ()).map_err(|e| e.field);
    let mut bad = bytes.clone();
    bad[100] ^= 1;
    assert_eq!(field(&bad), Err("hash"));
    let mut bad = bytes.clone();
    bad[8] = 2;
    assert_eq!(field(&bad), Err("version"));
    let mut bad = bytes.clone();
    bad[16] = 33;
    assert_eq!(field(&bad), Err("hidden"));
    assert_eq!(field(&bytes[..bytes.len() - 1]), Err("length"));
}

#[test]
fn bad_data_files_are_named_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = records(30, 5);
    let write = |name: &str, bytes: &[u8]| -> PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        path
    };
    let mut magic = good.clone();
    magic[0] = b'X';
    let mut version = good.clone();
    version[8] = 9;
    let mut size = good.clone();
    size[12] = 16;
    let trailing = &good[..good.len() - 3];
    let mut record = good.clone();
    record[16 + 32 * 4 + 26] = 7;
    let cases: [(&str, &[u8], &str); 5] = [
        ("magic.dat", &magic, "magic"),
        ("version.dat", &version, "version 9"),
        ("size.dat", &size, "record size 16"),
        ("trailing.dat", trailing, "29 bytes"),
        ("record.dat", &record, "record 4: record: result above 2"),
    ];
    for (name, bytes, why) in cases {
        let path = write(name, bytes);
        let err = Dataset::load(&[path], usize::MAX, false).expect_err(name);
        let text = err.to_string();
        assert!(text.contains(name) && text.contains(why), "{text}");
    }
    let missing = dir.path().join("absent.bin");
    let err = Dataset::load(&[missing], usize::MAX, false).expect_err("missing");
    assert!(matches!(err, LoadError::Io(..)) && err.to_string().contains("absent.bin"));
    assert!(matches!(
        Dataset::load(&[dir.path().join("x")], usize::MAX, false).err().map(|e| e.to_string()),
        Some(t) if t.contains("x")
    ));
    let mut bad_record = good.clone();
    bad_record[16 + 32 * 2 + 27] = 5;
    let err = dataset_error(&bad_record);
    assert_eq!(err, (Some(2), DataError::Record("side to move above 1")));
}

fn dataset_error(bytes: &[u8]) -> (Option<usize>, DataError) {
    Dataset::new()
        .add_file(bytes, usize::MAX, false)
        .expect_err("bad record")
}

/// `atomic-bot train`'s arguments for a tiny network: 3 epochs on one thread.
fn small_args(data: PathBuf, out: PathBuf) -> TrainArgs {
    TrainArgs {
        data: vec![data],
        out,
        hidden: 16,
        buckets: 2,
        kings: "plain".into(),
        epochs: 3,
        batch: 64,
        lr: 0.01,
        wdl: 0.5,
        power: 2.0,
        threads: Some(1),
        seed: 3,
        max_samples: None,
        mirror: false,
        checkpoint: None,
        init: None,
    }
}

#[test]
fn the_command_reads_a_directory_writes_the_net_and_checkpoints() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data_dir = dir.path().join("data");
    std::fs::create_dir(&data_dir).expect("mkdir");
    std::fs::write(data_dir.join("a.bin"), records(150, 1)).expect("write");
    std::fs::write(data_dir.join("b.bin"), records(150, 2)).expect("write");
    // A chunk still being written is not read.
    std::fs::write(data_dir.join("c.part"), b"half a file").expect("write");
    let out = dir.path().join("net.nnue");
    let args = TrainArgs {
        epochs: 2,
        max_samples: Some(250),
        checkpoint: Some(dir.path().join("ckpt")),
        ..small_args(data_dir, out.clone())
    };
    let summary = run(&args).expect("trains");
    assert!(
        summary
            .contains("a.bin b.bin (2 files) | 250 positions | 2 epochs | kings Plain | hidden 16"),
        "{summary}"
    );
    let net = QuantNet::parse(&std::fs::read(&out).expect("net written")).expect("parses");
    assert_eq!((net.hidden, net.buckets), (16, 2));
    for n in 1..=2 {
        let ckpt = dir.path().join(format!("ckpt/epoch-{n}.nnue"));
        QuantNet::parse(&std::fs::read(ckpt).expect("checkpoint")).expect("checkpoint parses");
    }
    let bad = TrainArgs {
        hidden: 100,
        ..args.clone()
    };
    assert!(
        run(&bad)
            .expect_err("hidden 100")
            .to_string()
            .contains("--hidden 100")
    );
}

#[test]
fn the_summary_names_few_files_and_abbreviates_many() {
    let files: Vec<PathBuf> = (0..5)
        .map(|k| PathBuf::from(format!("/d/c{k}.bin")))
        .collect();
    assert_eq!(super::data::describe(&files[..3]), "c0.bin c1.bin c2.bin");
    assert_eq!(super::data::describe(&files), "c0.bin … c4.bin");
}

#[test]
fn targets_blend_result_and_score() {
    let data = dataset(300, 6);
    let mut seen_nonzero = false;
    for i in 0..data.len() {
        let pure_score = data.target(i, 0.0);
        let pure_result = data.target(i, 1.0);
        assert!([0.0, 0.5, 1.0].contains(&pure_result));
        let mixed = data.target(i, 0.4);
        assert!((mixed - (0.4 * pure_result + 0.6 * pure_score)).abs() < 1e-6);
        seen_nonzero |= pure_score != 0.5;
        assert!((0.0..=1.0).contains(&pure_score));
    }
    assert!(seen_nonzero);
    assert!((sigmoid(0.0) - 0.5).abs() < 1e-7);
}

#[test]
fn mirroring_adds_each_position_with_its_files_flipped_and_the_same_targets() {
    let bytes = records(40, 3);
    let mut plain = Dataset::new();
    plain.add_file(&bytes, usize::MAX, false).expect("loads");
    let mut both = Dataset::new();
    both.add_file(&bytes, usize::MAX, true).expect("loads");
    assert_eq!(both.len(), 2 * plain.len());
    let file_flip = |f: u16| f ^ 7;
    for i in 0..plain.len() {
        let (a, m) = (
            plain.inputs(i, KingLayout::Plain),
            both.inputs(2 * i + 1, KingLayout::Plain),
        );
        assert_eq!(
            both.inputs(2 * i, KingLayout::Plain).us,
            a.us,
            "the original comes first"
        );
        let mut flipped: Vec<u16> = a.us.iter().map(|&f| file_flip(f)).collect();
        let mut mirrored: Vec<u16> = m.us.to_vec();
        flipped.sort_unstable();
        mirrored.sort_unstable();
        assert_eq!(flipped, mirrored, "sample {i}: the files are flipped");
        assert_eq!(plain.target(i, 0.4), both.target(2 * i + 1, 0.4));
        assert_eq!(plain.pieces(i), both.pieces(2 * i + 1));
    }
}

/// The trainer's inputs are the engine's: a network trained on records evaluates each record's
/// position in the engine (its own features, accumulators and kernels) exactly as the
/// trainer's integer oracle does on the record's inputs, plain and keyed by the king.
#[test]
fn the_engine_evaluates_trained_networks_as_the_trainer_does() {
    // Positions from random play (kings on every file, castled or not), and their records.
    let mut rng = Rng::new(21);
    let mut bytes = record::header().to_vec();
    let mut positions = Vec::new();
    let mut pos = Position::startpos();
    while positions.len() < 400 {
        let moves = pos.legal_moves();
        if moves.is_empty() || !pos.has_both_kings() || rng.below(100) == 0 {
            pos = Position::startpos();
            continue;
        }
        let m = moves[rng.below(moves.len())];
        bytes.extend_from_slice(&record::encode(&pos, material(&pos), GameResult::Draw, m));
        positions.push(pos);
        pos = pos.play(m).expect("legal move");
    }
    for kings in [KingLayout::Plain, KingLayout::Mirrored8] {
        let mut data = Dataset::new();
        data.add_file(&bytes, usize::MAX, false)
            .expect("valid records");
        let net = trained(&data, kings, 32, 4, 2);
        let file = export::to_bytes(&net);
        let oracle = QuantNet::parse(&file).expect("parses");
        let engine = std::sync::Arc::new(EngineNetwork::from_bytes(&file, "t").expect("loads"));
        assert_eq!(engine.kings(), kings);
        let mut stack = Stack::new(engine);
        let mut values = std::collections::HashSet::new();
        for (n, pos) in positions.iter().enumerate() {
            let want = oracle.eval(&data.inputs(n, kings));
            assert_eq!(stack.evaluate(pos), want, "{kings:?}: {}", pos.to_fen());
            values.insert(want);
        }
        assert!(
            values.len() > 50,
            "{kings:?}: {} distinct values",
            values.len()
        );
    }
}

#[test]
fn a_network_file_dequantises_to_a_model_that_quantises_back_to_it() {
    for kings in [KingLayout::Plain, KingLayout::Mirrored8] {
        let data = dataset(200, 6);
        let q = export::quantise(&trained(&data, kings, 32, 3, 3));
        let back = export::dequantise(&q).expect("the trainer's quantisation");
        assert_eq!(
            (back.kings, back.hidden, back.buckets),
            (kings, 32, 3),
            "{kings:?}"
        );
        assert_eq!(export::quantise(&back), q, "{kings:?}");
        // The float model of the file is the file's evaluation, to the integer pass's rounding
        // (its divisions truncate: about half a centipawn on average).
        let all: Vec<u32> = (0..data.len() as u32).collect();
        let (mean, worst) = export::quantisation_error(&back, &data, &all);
        assert!(
            worst <= 2.0 && mean <= 1.0,
            "{kings:?}: {mean} / {worst} cp"
        );
        let other = crate::search::nnue::Quantised { qa: 127, ..q };
        let why = export::dequantise(&other).expect_err("another quantisation");
        assert!(why.contains("qa is 127"), "{why}");
    }
}

#[test]
fn training_from_an_init_file_starts_from_its_weights_and_checks_its_shape() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data_file = dir.path().join("a.bin");
    std::fs::write(&data_file, records(200, 8)).expect("write");
    let first = dir.path().join("first.nnue");
    let args = small_args(data_file, first.clone());
    run(&args).expect("trains");
    let first_net = QuantNet::parse(&std::fs::read(&first).expect("written")).expect("parses");
    // At a negligible learning rate, a run from the file writes the file's network back
    // (from random weights it would not: the seed's start is not the file's).
    let again = dir.path().join("again.nnue");
    let tuned = TrainArgs {
        out: again.clone(),
        init: Some(first.clone()),
        lr: 1e-9,
        epochs: 1,
        seed: 4,
        ..args.clone()
    };
    let summary = run(&tuned).expect("fine-tunes");
    assert!(
        summary.contains("| from first.nnue: a.bin (1 files) |"),
        "{summary}"
    );
    let again_net = QuantNet::parse(&std::fs::read(&again).expect("written")).expect("parses");
    assert_eq!(again_net, first_net);
    let fresh = dir.path().join("fresh.nnue");
    run(&TrainArgs {
        out: fresh.clone(),
        init: None,
        ..tuned.clone()
    })
    .expect("trains");
    let fresh_net = QuantNet::parse(&std::fs::read(&fresh).expect("written")).expect("parses");
    assert_ne!(fresh_net.ft_weights, first_net.ft_weights);
    // A real fine-tune moves the weights.
    let moved = dir.path().join("moved.nnue");
    run(&TrainArgs {
        out: moved.clone(),
        lr: 0.01,
        ..tuned.clone()
    })
    .expect("fine-tunes");
    let moved_net = QuantNet::parse(&std::fs::read(&moved).expect("written")).expect("parses");
    assert_ne!(moved_net.ft_weights, first_net.ft_weights);
    // Shape mismatches and bad files are errors naming the file and the field.
    let wide = run(&TrainArgs {
        hidden: 32,
        ..tuned.clone()
    })
    .expect_err("hidden 32 against a 16-neuron file")
    .to_string();
    assert!(
        wide.contains("--init")
            && wide.contains("first.nnue")
            && wide.contains("hidden is 16, but --hidden is 32"),
        "{wide}"
    );
    let keyed = run(&TrainArgs {
        kings: "mirrored8".into(),
        ..tuned.clone()
    })
    .expect_err("keyed against a plain file")
    .to_string();
    assert!(keyed.contains("keyed Plain"), "{keyed}");
    let broken = dir.path().join("broken.nnue");
    let mut bytes = std::fs::read(&first).expect("read");
    bytes.truncate(bytes.len() / 2);
    std::fs::write(&broken, bytes).expect("write");
    let cut = run(&TrainArgs {
        init: Some(broken),
        ..tuned.clone()
    })
    .expect_err("a truncated file")
    .to_string();
    assert!(
        cut.contains("--init") && cut.contains("broken.nnue"),
        "{cut}"
    );
    let missing = run(&TrainArgs {
        init: Some(dir.path().join("none.nnue")),
        ..tuned
    })
    .expect_err("no file")
    .to_string();
    assert!(missing.contains("none.nnue"), "{missing}");
}
