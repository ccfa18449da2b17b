//! ND-JSON line reading over a streaming body, whatever the chunking.
//!
//! Lines are split on `\n` by a buffered reader (never by chunk); blank lines are keep-alives;
//! a read-idle watchdog reports a stream that stays silent too long (a socket stuck in
//! CLOSE-WAIT is a real lichess failure mode); over-long lines are cut and reported rather than
//! buffered without bound; lines that are not JSON are returned as `Malformed` with a truncated
//! copy for the log, so one bad line never ends a stream.

use std::time::Duration;

use serde::de::DeserializeOwned;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Longest line kept (lichess lines are a few kB at most).
pub const MAX_LINE: usize = 1 << 20;
/// How much of a bad line goes into the log.
const LOG_PREFIX: usize = 200;

/// One read from an ND-JSON stream.
#[derive(Debug)]
pub enum Line<T> {
    /// A blank line: the server is alive.
    KeepAlive,
    /// A parsed object, with its `type` field for the log.
    Item(T, Option<String>),
    /// JSON that is not a known shape, with the `type` if there was one (logged and ignored).
    Unknown {
        /// The `type` field, if any.
        kind: Option<String>,
    },
    /// Not JSON, or not a valid object; a truncated copy for the log.
    Malformed {
        /// First bytes of the line.
        excerpt: String,
        /// Parser message.
        error: String,
    },
}

/// Why a stream ended.
#[derive(Debug, thiserror::Error)]
pub enum StreamEnd {
    /// The server closed the stream.
    #[error("stream closed by the server")]
    Eof,
    /// Nothing (not even a keep-alive) arrived within the idle timeout.
    #[error("stream silent for {0:?}: watchdog")]
    Idle(Duration),
    /// A read error (connection reset...).
    #[error("stream read error: {0}")]
    Io(#[from] std::io::Error),
}

/// Reads lines with a watchdog.
///
/// The watchdog's deadline is `idle` after the last byte received (or after the stream was
/// opened), kept in the reader itself. Callers poll [`NdjsonReader::next`] inside `select!` loops
/// that drop and re-create the future whenever another branch fires; a timeout created inside
/// each call would restart at every such turn and never fire while the loop is busy (a 5 s tick
/// was enough to keep a dead event stream "alive" forever). For the same reason a read is
/// cancel-safe: the bytes of a partial line already taken from the socket stay in the reader's
/// buffer for the next call.
pub struct NdjsonReader<R> {
    reader: R,
    idle: Duration,
    buf: Vec<u8>,
    /// `buf` holds a line that was returned: clear it before reading the next one.
    returned: bool,
    /// The line being read grew past [`MAX_LINE`].
    overflow: bool,
    /// When the last bytes arrived (or the stream was opened): the watchdog runs from here.
    last_byte: tokio::time::Instant,
    line_at: std::time::Instant,
}

impl<R: AsyncBufRead + Unpin> NdjsonReader<R> {
    /// `idle`: the watchdog timeout.
    pub fn new(reader: R, idle: Duration) -> Self {
        Self {
            reader,
            idle,
            buf: Vec::with_capacity(4096),
            returned: false,
            overflow: false,
            last_byte: tokio::time::Instant::now(),
            line_at: std::time::Instant::now(),
        }
    }

    /// When the watchdog fires if nothing more arrives.
    pub fn deadline(&self) -> tokio::time::Instant {
        self.last_byte + self.idle
    }

    /// The next line, raw (without the newline), or why the stream ended. Over-long lines are
    /// returned cut at [`MAX_LINE`] bytes (they then fail to parse and are reported).
    /// Cancel-safe: dropping the future loses no byte and does not move the watchdog.
    pub async fn next_raw(&mut self) -> Result<&[u8], StreamEnd> {
        if std::mem::take(&mut self.returned) {
            self.buf.clear();
            self.overflow = false;
        }
        loop {
            let deadline = self.deadline();
            let chunk = match tokio::time::timeout_at(deadline, self.reader.fill_buf()).await {
                Err(_) => return Err(StreamEnd::Idle(self.idle)),
                Ok(Err(e)) => return Err(StreamEnd::Io(e)),
                Ok(Ok(c)) => c,
            };
            if chunk.is_empty() {
                // EOF: a final line without newline still counts.
                if self.buf.is_empty() {
                    return Err(StreamEnd::Eof);
                }
                break;
            }
            self.last_byte = tokio::time::Instant::now();
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let room = MAX_LINE.saturating_sub(self.buf.len());
            let data = &chunk[..take];
            if data.len() > room {
                self.overflow = true;
            }
            self.buf.extend_from_slice(&data[..data.len().min(room)]);
            self.reader.consume(take);
            if done {
                self.line_at = std::time::Instant::now();
                break;
            }
        }
        self.returned = true;
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        if self.overflow {
            tracing::warn!(bytes = self.buf.len(), "over-long stream line cut");
        }
        Ok(&self.buf)
    }

    /// When the last line's newline was read (before parsing): the start of the turn latency.
    pub fn line_at(&self) -> std::time::Instant {
        self.line_at
    }

    /// The next line, classified and parsed as `T`.
    pub async fn next<T: DeserializeOwned>(&mut self) -> Result<Line<T>, StreamEnd> {
        let raw = self.next_raw().await?;
        Ok(classify(raw))
    }
}

/// Parses one raw line.
pub fn classify<T: DeserializeOwned>(raw: &[u8]) -> Line<T> {
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Line::KeepAlive;
    }
    let value: serde_json::Value = match serde_json::from_slice(raw) {
        Ok(v) => v,
        Err(e) => {
            return Line::Malformed {
                excerpt: excerpt(raw),
                error: e.to_string(),
            };
        }
    };
    let kind = value
        .get("type")
        .and_then(|t| t.as_str())
        .map(str::to_owned);
    if !value.is_object() {
        return Line::Malformed {
            excerpt: excerpt(raw),
            error: "not a JSON object".into(),
        };
    }
    match serde_json::from_value::<T>(value) {
        Ok(item) => Line::Item(item, kind),
        Err(e) if kind.is_some() => Line::Malformed {
            excerpt: excerpt(raw),
            error: e.to_string(),
        },
        Err(_) => Line::Unknown { kind },
    }
}

/// A log-safe excerpt of a line.
pub fn excerpt(raw: &[u8]) -> String {
    // One log record stays one line: an HTML error page's newlines and other control
    // characters become spaces.
    let s: String = String::from_utf8_lossy(&raw[..raw.len().min(LOG_PREFIX)])
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if raw.len() > LOG_PREFIX {
        format!("{s}... ({} bytes)", raw.len())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lichess::model::{Event, GameEvent};

    fn reader(chunks: Vec<&'static [u8]>) -> NdjsonReader<impl AsyncBufRead + Unpin> {
        let stream = futures_util::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, std::io::Error>(bytes::Bytes::from_static(c))),
        );
        NdjsonReader::new(
            tokio_util::io::StreamReader::new(stream),
            Duration::from_secs(5),
        )
    }

    #[tokio::test]
    async fn lines_split_across_chunks() {
        let mut r = reader(vec![
            b"{\"type\":\"game",
            b"State\",\"moves\":\"e2e4\",\"status\":\"started\",\"wtime\":1,\"btime\":1}\n\n{\"ty",
            b"pe\":\"chatLine\",\"text\":\"hi\"}\r\nnot json\n[1]\n{\"type\":\"gameState\",\"wtime\":\"x\"}\n{\"type\":\"zzz\"}",
        ]);
        assert!(matches!(
            r.next::<GameEvent>().await.unwrap(),
            Line::Item(GameEvent::GameState(_), _)
        ));
        assert!(matches!(
            r.next::<GameEvent>().await.unwrap(),
            Line::KeepAlive
        ));
        assert!(matches!(
            r.next::<GameEvent>().await.unwrap(),
            Line::Item(GameEvent::ChatLine(_), _)
        ));
        assert!(matches!(
            r.next::<GameEvent>().await.unwrap(),
            Line::Malformed { .. }
        ));
        assert!(matches!(
            r.next::<GameEvent>().await.unwrap(),
            Line::Malformed { .. }
        ));
        assert!(matches!(
            r.next::<GameEvent>().await.unwrap(),
            Line::Malformed { .. }
        ));
        assert!(matches!(
            r.next::<Event>().await.unwrap(),
            Line::Item(Event::Unknown, Some(_))
        ));
        assert!(matches!(r.next::<Event>().await, Err(StreamEnd::Eof)));
    }

    #[test]
    fn an_excerpt_is_one_line() {
        let page = b"<!DOCTYPE html>\n<html>\r\n<body>Too many\trequests</body>\n</html>";
        let e = excerpt(page);
        assert!(!e.chars().any(char::is_control), "{e:?}");
        assert!(e.starts_with("<!DOCTYPE html> <html>"), "{e:?}");
        let long = vec![b'x'; 500];
        assert!(excerpt(&long).ends_with("... (500 bytes)"));
    }

    #[tokio::test]
    async fn over_long_line_is_cut_and_reported() {
        let big: &'static [u8] = Box::leak(vec![b'x'; MAX_LINE + 10].into_boxed_slice());
        let mut r = reader(vec![big, b"\n{\"type\":\"gameState\",\"moves\":\"\",\"wtime\":1,\"btime\":1,\"status\":\"started\"}\n"]);
        assert!(matches!(
            r.next::<GameEvent>().await.unwrap(),
            Line::Malformed { .. }
        ));
        assert!(matches!(
            r.next::<GameEvent>().await.unwrap(),
            Line::Item(GameEvent::GameState(_), _)
        ));
    }

    /// A reader over a channel the test writes to, chunk by chunk.
    fn channel_reader(
        idle: Duration,
    ) -> (
        tokio::sync::mpsc::Sender<Result<bytes::Bytes, std::io::Error>>,
        NdjsonReader<impl AsyncBufRead + Unpin>,
    ) {
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let r = NdjsonReader::new(
            tokio_util::io::StreamReader::new(tokio_stream::wrappers::ReceiverStream::new(rx)),
            idle,
        );
        (tx, r)
    }

    /// The supervisor's and the game task's shape: `next()` re-created on every turn of a
    /// `select!` whose other branch (a tick) fires more often than the idle timeout. The
    /// watchdog must still fire `idle` after the last byte.
    #[tokio::test(start_paused = true)]
    async fn watchdog_fires_although_a_busier_branch_re_creates_the_read() {
        let (tx, mut r) = channel_reader(Duration::from_secs(3));
        tx.send(Ok(bytes::Bytes::from_static(b"\n"))).await.unwrap();
        let start = tokio::time::Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(700));
        let mut ticks = 0;
        let end = loop {
            tokio::select! {
                r = r.next::<Event>() => match r {
                    Ok(_) => {}
                    Err(e) => break e,
                },
                _ = tick.tick() => ticks += 1,
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "watchdog never fired"
            );
        };
        assert!(matches!(end, StreamEnd::Idle(_)), "{end:?}");
        let waited = start.elapsed();
        assert!(
            waited >= Duration::from_secs(3) && waited <= Duration::from_millis(3100),
            "{waited:?}"
        );
        assert!(ticks >= 4, "{ticks}");
        drop(tx);
    }

    /// Bytes keep the stream alive even before a line is complete, and a read cancelled in the
    /// middle of a line loses nothing.
    #[tokio::test(start_paused = true)]
    async fn a_cancelled_read_keeps_the_partial_line_and_bytes_move_the_deadline() {
        let (tx, mut r) = channel_reader(Duration::from_secs(3));
        let line =
            b"{\"type\":\"gameState\",\"moves\":\"e2e4\",\"status\":\"started\",\"wtime\":1,\"btime\":1}\n";
        let start = tokio::time::Instant::now();
        for part in line.chunks(8) {
            tx.send(Ok(bytes::Bytes::copy_from_slice(part)))
                .await
                .unwrap();
            // A read that is cancelled after two seconds, as a busier branch would.
            let cancelled = tokio::time::timeout(Duration::from_secs(2), r.next::<GameEvent>());
            if let Ok(done) = cancelled.await {
                let done = done.unwrap();
                assert!(
                    matches!(&done, Line::Item(GameEvent::GameState(s), _) if s.moves == "e2e4"),
                    "{done:?}"
                );
                // Chunks two seconds apart: far longer than the idle timeout in all.
                let cancels = line.chunks(8).count() as u32 - 1;
                assert!(cancels >= 4);
                assert_eq!(start.elapsed(), Duration::from_secs(2) * cancels);
                return;
            }
        }
        panic!("the line never came whole");
    }

    #[tokio::test]
    async fn silent_stream_trips_the_watchdog() {
        let (_tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(1);
        let mut r = NdjsonReader::new(
            tokio_util::io::StreamReader::new(tokio_stream::wrappers::ReceiverStream::new(rx)),
            Duration::from_millis(50),
        );
        assert!(matches!(r.next::<Event>().await, Err(StreamEnd::Idle(_))));
    }
}
