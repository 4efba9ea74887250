//! A downstream server's stdout with its lines bounded by the response limit
//! (spec 4.7.5).
//!
//! rmcp drops a line over its own cap (16 MiB) and keeps reading, so the
//! call that line answered would wait for its time-out. Here the stream ends
//! instead at the first line longer than the limit: lines before it are
//! delivered whole, nothing of it is buffered, the connection closes so
//! every pending call fails at once, and [`Overflow`] says why, so the call
//! answers `VALIDATION_PAYLOAD_TOO_LARGE` and the supervisor restarts the
//! server.

use std::{
    io,
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll, ready},
};

use tokio::io::{AsyncRead, ReadBuf};

/// Set once a line went over the limit: how many of its bytes had arrived.
#[derive(Debug, Default)]
pub struct Overflow(AtomicUsize);

impl Overflow {
    /// Bytes of the line that was cut, if one was.
    pub fn cut_line_bytes(&self) -> Option<usize> {
        Some(self.0.load(Ordering::Acquire)).filter(|bytes| *bytes > 0)
    }
}

pub struct BoundedLines<R> {
    inner: R,
    limit: usize,
    /// Bytes of the current line read so far (no newline yet).
    line: usize,
    overflow: Arc<Overflow>,
}

impl<R> BoundedLines<R> {
    pub fn new(inner: R, limit: usize, overflow: Arc<Overflow>) -> Self {
        Self { inner, limit, line: 0, overflow }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.overflow.cut_line_bytes().is_some() {
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let mut line_start = before;
        let mut offset = before;
        for chunk in
            buf.filled().get(before..).unwrap_or_default().split_inclusive(|byte| *byte == b'\n')
        {
            let ends_line = chunk.last() == Some(&b'\n');
            let content = chunk.len() - usize::from(ends_line);
            if this.line + content > this.limit {
                this.overflow.0.store(this.line + content, Ordering::Release);
                buf.set_filled(line_start);
                return Poll::Ready(Ok(()));
            }
            offset += chunk.len();
            if ends_line {
                this.line = 0;
                line_start = offset;
            } else {
                this.line += content;
            }
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn read_all(input: &'static [u8], limit: usize) -> (Vec<u8>, Option<usize>) {
        let overflow = Arc::new(Overflow::default());
        let mut reader = BoundedLines::new(input, limit, overflow.clone());
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        (out, overflow.cut_line_bytes())
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_unchanged() {
        assert_eq!(
            read_all(b"12345\n123\n\n12345", 5).await,
            (b"12345\n123\n\n12345".to_vec(), None)
        );
    }

    #[tokio::test]
    async fn the_stream_ends_before_the_first_line_over_the_limit() {
        let (out, cut) = read_all(b"ok\n123456\nnever\n", 5).await;
        assert_eq!(out, b"ok\n");
        assert_eq!(cut, Some(6));
    }

    #[tokio::test]
    async fn a_line_is_measured_across_reads() {
        let overflow = Arc::new(Overflow::default());
        let parts = parts_reader(&[b"ab", b"cd", b"ef\n"]);
        let mut reader = BoundedLines::new(parts, 5, overflow.clone());
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        assert_eq!(
            out, b"abcd",
            "what was already delivered stays an unfinished line, which rmcp discards at the end"
        );
        assert_eq!(overflow.cut_line_bytes(), Some(6));
    }

    /// A reader that yields `parts` one read at a time.
    fn parts_reader(parts: &'static [&'static [u8]]) -> Parts {
        Parts(parts.iter().copied().collect())
    }

    struct Parts(std::collections::VecDeque<&'static [u8]>);

    impl AsyncRead for Parts {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if let Some(part) = self.0.pop_front() {
                buf.put_slice(part);
            }
            Poll::Ready(Ok(()))
        }
    }
}
