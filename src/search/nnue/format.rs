//! The network file format, version 1: what the trainer writes and the engine reads.
//!
//! All integers are little-endian.
//!
//! ```text
//! offset 0   magic    b"ATOMNNUE"                                      8 bytes
//! offset 8   version  u32 = 1
//! offset 12  inputs   u32 = 768 · K (one perspective's features; K king buckets, see kings)
//! offset 16  hidden   u32 = H    (one perspective's accumulator; a multiple of 16, 16..=2048)
//! offset 20  buckets  u32 = B    (output buckets by piece count, 1..=16)
//! offset 24  qa       u32        (feature-transformer quantisation, 255)
//! offset 28  qb       u32        (output-layer quantisation, 64)
//! offset 32  scale    u32        (centipawn scale, 400)
//! offset 36  kings    u32        (0: plain, K = 1; 1: eight king buckets, mirrored, K = 8;
//!                                 `features::KingLayout`; files before it was defined hold 0)
//! offset 40  hash     u64 = FNV-1a 64 of the payload bytes
//! offset 48  payload:
//!    ft_weights  i16 [768·K][H] (feature-major: the H weights of feature 0, then of feature 1, ...)
//!    ft_bias     i16 [H]
//!    out_weights i16 [B][2H]   (per bucket: H weights for the side to move's accumulator,
//!                               then H for the other side's)
//!    out_bias    i32 [B]
//! ```
//!
//! The file is exactly 48 bytes plus the payload. Two more conditions keep the integer
//! arithmetic of the evaluation exact: `qa` fits an `i16`, and every output weight times `qa`
//! fits an `i16` (the SIMD kernels multiply a clipped activation by a weight in 16 bits).
//!
//! Why a hash of the payload: a network file is copied between machines and committed to the
//! repository; a flipped bit or a half-written file must be refused at load, not played with.

use std::fmt;
use std::path::Path;

use super::features::KingLayout;
use super::network::{Network, Quantised};

/// The first eight bytes of every network file.
pub const MAGIC: &[u8; 8] = b"ATOMNNUE";
/// The format version this build reads and writes.
pub const VERSION: u32 = 1;
/// The header's size in bytes (the payload starts here).
pub const HEADER_BYTES: usize = 48;
/// The largest accumulator (per perspective) a file may declare.
pub const MAX_HIDDEN: usize = 2048;
/// The most output buckets a file may declare.
pub const MAX_BUCKETS: usize = 16;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a (64 bits) of `bytes`: the payload hash of the header.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    })
}

/// Why a network file was refused: the file, the header field or payload part at fault, and
/// what was wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NetworkError {
    /// The file (its path, or a name such as "embedded network").
    pub file: String,
    /// The field at fault: a header field (`magic`, `version`, `inputs`, `hidden`, `buckets`,
    /// `qa`, `qb`, `scale`, `kings`, `hash`), `length`, `out_weights`, or `file` when it
    /// could not be read at all.
    pub field: &'static str,
    /// What was wrong.
    pub problem: String,
}

impl fmt::Display for NetworkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "network file {}: field `{}`: {}",
            self.file, self.field, self.problem
        )
    }
}

impl std::error::Error for NetworkError {}

/// The header fields after the magic, as read.
struct Header {
    kings: KingLayout,
    hidden: usize,
    buckets: usize,
    qa: u32,
    qb: u32,
    scale: u32,
    hash: u64,
}

/// The payload's size in bytes for `inputs`, `hidden` and `buckets`.
fn payload_bytes(inputs: usize, hidden: usize, buckets: usize) -> usize {
    2 * (inputs * hidden + hidden + buckets * 2 * hidden) + 4 * buckets
}

/// Parses a network file's bytes; `file` names it in errors.
pub fn parse(bytes: &[u8], file: &str) -> Result<Network, NetworkError> {
    let err = |field: &'static str, problem: String| NetworkError {
        file: file.to_owned(),
        field,
        problem,
    };
    if bytes.len() < HEADER_BYTES {
        if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
            return Err(err("magic", "not an ATOMNNUE network file".into()));
        }
        return Err(err(
            "length",
            format!(
                "{} bytes, shorter than the {HEADER_BYTES}-byte header",
                bytes.len()
            ),
        ));
    }
    if &bytes[..MAGIC.len()] != MAGIC {
        return Err(err(
            "magic",
            format!(
                "expected {:?}, found {:?}",
                String::from_utf8_lossy(MAGIC),
                String::from_utf8_lossy(&bytes[..MAGIC.len()])
            ),
        ));
    }
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let version = u32_at(8);
    if version != VERSION {
        return Err(err(
            "version",
            format!("version {version} is not supported (this build reads {VERSION})"),
        ));
    }
    let kings_id = u32_at(36);
    let Some(kings) = KingLayout::from_id(kings_id) else {
        return Err(err(
            "kings",
            format!("{kings_id} names no king layout (0: plain, 1: eight buckets, mirrored)"),
        ));
    };
    let inputs = u32_at(12);
    if inputs as usize != kings.inputs() {
        return Err(err(
            "inputs",
            format!(
                "{inputs}, expected {} for king layout {kings_id}",
                kings.inputs()
            ),
        ));
    }
    let hidden = u32_at(16) as usize;
    if !(16..=MAX_HIDDEN).contains(&hidden) || !hidden.is_multiple_of(16) {
        return Err(err(
            "hidden",
            format!("{hidden} is not a multiple of 16 in 16..={MAX_HIDDEN}"),
        ));
    }
    let buckets = u32_at(20) as usize;
    if !(1..=MAX_BUCKETS).contains(&buckets) {
        return Err(err(
            "buckets",
            format!("{buckets} is outside 1..={MAX_BUCKETS}"),
        ));
    }
    let (qa, qb, scale) = (u32_at(24), u32_at(28), u32_at(32));
    for (field, value) in [("qa", qa), ("qb", qb), ("scale", scale)] {
        if value == 0 {
            return Err(err(field, "must not be 0".into()));
        }
    }
    if qa > i16::MAX as u32 {
        return Err(err("qa", format!("{qa} does not fit an i16")));
    }
    let hash = u64::from_le_bytes(bytes[40..48].try_into().expect("8 bytes"));
    let expected = HEADER_BYTES + payload_bytes(kings.inputs(), hidden, buckets);
    if bytes.len() != expected {
        return Err(err(
            "length",
            format!(
                "expected {expected} bytes for {inputs} inputs, hidden {hidden} and {buckets} buckets, found {}",
                bytes.len()
            ),
        ));
    }
    let payload = &bytes[HEADER_BYTES..];
    let actual = fnv1a(payload);
    if actual != hash {
        return Err(err(
            "hash",
            format!("header says {hash:#018x}, payload hashes to {actual:#018x}"),
        ));
    }
    let header = Header {
        kings,
        hidden,
        buckets,
        qa,
        qb,
        scale,
        hash,
    };
    let quantised = read_payload(&header, payload);
    Network::from_quantised(quantised).map_err(|e| NetworkError {
        file: file.to_owned(),
        ..e
    })
}

/// The payload's arrays (their sizes already checked).
fn read_payload(h: &Header, payload: &[u8]) -> Quantised {
    let mut at = 0;
    let mut i16s = |n: usize| -> Vec<i16> {
        let v = payload[at..at + 2 * n]
            .chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        at += 2 * n;
        v
    };
    let ft_weights = i16s(h.kings.inputs() * h.hidden);
    let ft_bias = i16s(h.hidden);
    let out_weights = i16s(h.buckets * 2 * h.hidden);
    let out_bias = payload[at..]
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    debug_assert_eq!(h.hash, fnv1a(payload));
    Quantised {
        kings: h.kings,
        hidden: h.hidden,
        buckets: h.buckets,
        qa: h.qa,
        qb: h.qb,
        scale: h.scale,
        ft_weights,
        ft_bias,
        out_weights,
        out_bias,
    }
}

/// Reads and parses the network file at `path`.
pub fn load(path: &Path) -> Result<Network, NetworkError> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| NetworkError {
        file: file.clone(),
        field: "file",
        problem: format!("cannot be read: {e}"),
    })?;
    parse(&bytes, &file)
}

/// The file bytes of `q` (header with its hash, then the payload).
pub fn write(q: &Quantised) -> Vec<u8> {
    let mut payload = Vec::with_capacity(payload_bytes(q.kings.inputs(), q.hidden, q.buckets));
    for w in q.ft_weights.iter().chain(&q.ft_bias).chain(&q.out_weights) {
        payload.extend_from_slice(&w.to_le_bytes());
    }
    for b in &q.out_bias {
        payload.extend_from_slice(&b.to_le_bytes());
    }
    let mut bytes = Vec::with_capacity(HEADER_BYTES + payload.len());
    bytes.extend_from_slice(MAGIC);
    for field in [
        VERSION,
        q.kings.inputs() as u32,
        q.hidden as u32,
        q.buckets as u32,
        q.qa,
        q.qb,
        q.scale,
        q.kings.id(),
    ] {
        bytes.extend_from_slice(&field.to_le_bytes());
    }
    bytes.extend_from_slice(&fnv1a(&payload).to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes() -> Vec<u8> {
        Network::random(32, 4, 7).to_bytes()
    }

    fn field_of(bytes: &[u8]) -> &'static str {
        parse(bytes, "test.nnue").expect_err("refused").field
    }

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn the_writer_and_the_reader_round_trip() {
        let net = Network::random(48, 3, 11);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), HEADER_BYTES + payload_bytes(768, 48, 3));
        let back = parse(&bytes, "x").expect("parses");
        assert_eq!(back.to_bytes(), bytes);
        assert_eq!(back.hash(), net.hash());
        assert_eq!(back.hidden(), 48);
        assert_eq!(back.buckets(), 3);
    }

    #[test]
    fn a_king_keyed_network_round_trips_and_declares_its_layout() {
        let net = Network::random_keyed(KingLayout::Mirrored8, 32, 2, 5);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), HEADER_BYTES + payload_bytes(8 * 768, 32, 2));
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4"));
        assert_eq!(u32_at(12), 8 * 768);
        assert_eq!(u32_at(36), 1);
        let back = parse(&bytes, "x").expect("parses");
        assert_eq!(back.kings(), KingLayout::Mirrored8);
        assert_eq!(back.to_bytes(), bytes);
        // Declared plain, the payload is eight times too long.
        let mut plain = bytes.clone();
        plain[36..40].copy_from_slice(&0u32.to_le_bytes());
        plain[12..16].copy_from_slice(&768u32.to_le_bytes());
        assert_eq!(field_of(&plain), "length");
    }

    #[test]
    fn every_damage_is_refused_naming_the_field_and_the_file() {
        let good = bytes();
        assert!(parse(&good, "t").is_ok());

        let mut flipped = good.clone();
        flipped[HEADER_BYTES + 1000] ^= 0x10;
        assert_eq!(field_of(&flipped), "hash");
        let mut flipped = good.clone();
        *flipped.last_mut().expect("bytes") ^= 1;
        assert_eq!(field_of(&flipped), "hash");

        assert_eq!(field_of(&good[..good.len() - 1]), "length");
        assert_eq!(field_of(&good[..HEADER_BYTES + 10]), "length");
        assert_eq!(field_of(&good[..20]), "length");
        assert_eq!(field_of(&good[..3]), "magic");
        let mut longer = good.clone();
        longer.push(0);
        assert_eq!(field_of(&longer), "length");

        let with = |at: usize, value: u32| {
            let mut b = good.clone();
            b[at..at + 4].copy_from_slice(&value.to_le_bytes());
            b
        };
        let mut magic = good.clone();
        magic[0] = b'X';
        assert_eq!(field_of(&magic), "magic");
        assert_eq!(field_of(&with(8, 2)), "version");
        assert_eq!(field_of(&with(12, 769)), "inputs");
        assert_eq!(field_of(&with(16, 40)), "hidden");
        assert_eq!(field_of(&with(16, 0)), "hidden");
        assert_eq!(field_of(&with(16, 4096)), "hidden");
        assert_eq!(field_of(&with(20, 0)), "buckets");
        assert_eq!(field_of(&with(20, 17)), "buckets");
        assert_eq!(field_of(&with(24, 0)), "qa");
        assert_eq!(field_of(&with(28, 0)), "qb");
        assert_eq!(field_of(&with(32, 0)), "scale");
        assert_eq!(field_of(&with(36, 2)), "kings");
        // A keyed layout declared over a plain payload: the inputs no longer match.
        assert_eq!(field_of(&with(36, 1)), "inputs");
        // A header that declares a bigger network than the bytes hold.
        assert_eq!(field_of(&with(16, 64)), "length");

        let e = parse(&with(8, 9), "nets/bad.nnue").expect_err("refused");
        let text = e.to_string();
        assert!(
            text.contains("nets/bad.nnue") && text.contains("version"),
            "{text}"
        );
    }

    #[test]
    fn an_output_weight_that_overflows_the_16_bit_product_is_refused() {
        let net = Network::random(16, 1, 3);
        let mut q = net.to_quantised();
        q.out_weights[5] = 200;
        let e = Network::from_quantised(q.clone()).expect_err("refused");
        assert_eq!(e.field, "out_weights");
        // Through a file, with a valid hash, the same.
        let bytes = write(&q);
        assert_eq!(field_of(&bytes), "out_weights");
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let e = load(Path::new("/nonexistent/dir/net.nnue")).expect_err("refused");
        assert_eq!(e.field, "file");
        assert!(e.to_string().contains("/nonexistent/dir/net.nnue"));
    }
}
