//! The network built into the binary: the default evaluation of both searches, the bot and
//! UCI (`EvalFile` `<embedded>`). `nets/atomic-gen4.nnue` is the fifth generation, trained from
//! random weights on the self-play of the fourth (`nets/atomic-gen3.nnue`, at 5 000 and 16 000
//! nodes a move) and on Fairy-Stockfish-labelled positions. The earlier generations
//! (`nets/atomic-gen2.nnue`, `-gen1`, `-gen0`) stay as files so that their data can be made
//! again; docs/NNUE.md has the data, trainer settings and games of each. Embedding it means a
//! deployed binary needs no file beside it, and the bytes are checked (format, sizes, hash) like
//! any file the first time they are used.

use std::sync::{Arc, OnceLock};

use super::network::Network;

/// What `EvalFile` and `search.eval_file` call the embedded network.
pub const NAME: &str = "<embedded>";
/// What they call the linear evaluation.
pub const LINEAR: &str = "<linear>";
/// The embedded file's path, written once: `include_bytes!` needs a literal, not a `const`.
macro_rules! embedded_path {
    () => {
        "nets/atomic-gen4.nnue"
    };
}

/// The embedded file's path in the repository.
pub const FILE: &str = embedded_path!();

static BYTES: &[u8] = include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/", embedded_path!()));

/// The embedded network, parsed once and shared.
pub fn network() -> Arc<Network> {
    static NETWORK: OnceLock<Arc<Network>> = OnceLock::new();
    Arc::clone(NETWORK.get_or_init(|| {
        // The bytes are part of the binary and a test parses them: this cannot fail at run
        // time unless the build embedded a file the tests never saw.
        Arc::new(Network::from_bytes(BYTES, FILE).expect("the embedded network parses"))
    }))
}

/// The bytes as embedded (for tests and `bench`).
pub fn bytes() -> &'static [u8] {
    BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_network_parses_and_its_hash_is_the_headers() {
        let net = Network::from_bytes(bytes(), FILE).expect("parses");
        let mut fnv: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in &bytes()[48..] {
            fnv = (fnv ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        let header = u64::from_le_bytes(bytes()[40..48].try_into().expect("8 bytes"));
        assert_eq!(fnv, header, "the payload's FNV-1a is the header's hash");
        assert_eq!(net.to_bytes(), bytes(), "it writes back to the same bytes");
        assert!(
            Arc::ptr_eq(&network(), &network()),
            "parsed once and shared"
        );
    }
}
