//! One stream connection, from both ends: the server's [`Conn`] (kept in the state, by account
//! for event streams and by game for game streams) and the [`Stream`] a handler answers with.
//! The rules of what the streams carry are in `streams.rs`.

use axum::body::Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// An open ND-JSON stream: its lines, and the token that cuts it abruptly.
pub(crate) struct Stream {
    /// Lines as the server sends them (newline included).
    pub(crate) rx: mpsc::UnboundedReceiver<Bytes>,
    /// Cancelled to cut the stream without a final line.
    pub(crate) cut: CancellationToken,
}

/// One open stream connection: whose it is (user and User-Agent, as lila tells streams
/// apart), where its lines go, and whether it was silenced by a fault.
pub(super) struct Conn {
    pub(super) user: String,
    pub(super) ua: String,
    pub(super) tx: mpsc::UnboundedSender<Bytes>,
    pub(super) cut: CancellationToken,
    pub(super) silent: bool,
}

impl Conn {
    pub(super) fn send(&self, line: &str) -> bool {
        if self.silent {
            return !self.tx.is_closed();
        }
        let mut b = line.as_bytes().to_vec();
        b.push(b'\n');
        self.tx.send(Bytes::from(b)).is_ok()
    }
}
