//! The stdio transport: newline-delimited JSON-RPC on stdin/stdout, every
//! frame screened before parsing (see `screen`).
//!
//! Reading is bounded: at most the request-size limit of a frame is kept,
//! the rest is counted and dropped, so a peer that never sends a newline
//! cannot grow memory. Reading is cancel-safe (rmcp selects over
//! `receive`): all state lives in the transport and no await point sits
//! between taking bytes from the buffer and recording them. Output goes
//! through one writer thread, so the service's messages and the screen's
//! refusals never interleave, and everything queued is written before the
//! thread ends. The thread writes with plain blocking writes: an async
//! stdout would hand every frame to another thread anyway, one wake-up
//! more per answer.

use std::{borrow::Cow, io};

use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    service::RoleServer,
    transport::Transport,
};
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, BufReader},
    sync::mpsc,
    task::JoinHandle,
};

use crate::protocol::limits::Limits;

use super::screen::{Screened, screen};

/// Frames queued for output before senders wait.
const OUTPUT_QUEUE: usize = 1024;

pub struct ScreenedTransport<R> {
    reader: BufReader<R>,
    limits: Limits,
    /// The kept prefix of the frame being read.
    frame: Vec<u8>,
    /// The full length of the frame being read, kept or not.
    frame_len: usize,
    output: mpsc::Sender<Vec<u8>>,
    /// A refusal waiting for room in the output queue.
    pending_reply: Option<Vec<u8>>,
    /// Whether a request has reached the service. Before that, rmcp ends the
    /// session on anything but a request, so stray notifications and
    /// responses are dropped here instead.
    session_started: bool,
}

impl<R: AsyncRead + Unpin + Send + 'static> ScreenedTransport<R> {
    /// Builds the transport and the writer thread that owns `writer`.
    /// Await the handle after the service ends to be sure every answer was
    /// written.
    pub fn new<W>(reader: R, writer: W, limits: Limits) -> (Self, JoinHandle<()>)
    where
        W: io::Write + Send + 'static,
    {
        let (output, queue) = mpsc::channel(OUTPUT_QUEUE);
        let writer_task = tokio::task::spawn_blocking(move || write_frames(writer, queue));
        let transport = Self {
            reader: BufReader::new(reader),
            limits,
            frame: Vec::new(),
            frame_len: 0,
            output,
            pending_reply: None,
            session_started: false,
        };
        (transport, writer_task)
    }

    /// Reads the next newline-terminated frame, or what is left at end of
    /// input. Returns the kept bytes and the full length.
    async fn read_frame(&mut self) -> io::Result<Option<(Vec<u8>, usize)>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                if self.frame_len == 0 {
                    return Ok(None);
                }
                return Ok(Some(self.take_frame()));
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let chunk = available.get(..newline.unwrap_or(available.len())).unwrap_or_default();
            let room = self.limits.max_request_size.saturating_sub(self.frame.len());
            self.frame.extend_from_slice(chunk.get(..chunk.len().min(room)).unwrap_or_default());
            self.frame_len += chunk.len();
            let consumed = chunk.len() + usize::from(newline.is_some());
            self.reader.consume(consumed);
            if newline.is_some() {
                return Ok(Some(self.take_frame()));
            }
        }
    }

    fn take_frame(&mut self) -> (Vec<u8>, usize) {
        let mut frame = std::mem::take(&mut self.frame);
        let mut len = std::mem::take(&mut self.frame_len);
        if frame.last() == Some(&b'\r') && len == frame.len() {
            frame.pop();
            len -= 1;
        }
        (frame, len)
    }

    async fn flush_pending_reply(&mut self) -> bool {
        if self.pending_reply.is_none() {
            return true;
        }
        let Ok(permit) = self.output.reserve().await else {
            return false;
        };
        if let Some(reply) = self.pending_reply.take() {
            permit.send(reply);
        }
        true
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for ScreenedTransport<R> {
    type Error = io::Error;

    fn name() -> Cow<'static, str> {
        "screened-stdio".into()
    }

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        async move {
            let line = encode(&item)?;
            output
                .send(line)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "output closed"))
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if !self.flush_pending_reply().await {
                return None;
            }
            let (frame, len) = match self.read_frame().await {
                Ok(Some(frame)) => frame,
                Ok(None) => return None,
                Err(error) => {
                    tracing::error!(%error, "reading stdin failed");
                    return None;
                }
            };
            match screen(&frame, len, &self.limits) {
                Screened::Message(message) => {
                    let is_request = matches!(*message, ClientJsonRpcMessage::Request(_));
                    if is_request || self.session_started {
                        self.session_started |= is_request;
                        return Some(*message);
                    }
                    tracing::debug!("dropped a non-request message sent before initialize");
                }
                Screened::Reply(reply) => match encode(&reply) {
                    Ok(line) => self.pending_reply = Some(line),
                    Err(error) => tracing::error!(%error, "encoding a refusal failed"),
                },
                Screened::Ignore => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn encode(message: &ServerJsonRpcMessage) -> io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

fn write_frames<W: io::Write>(mut writer: W, mut queue: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = queue.blocking_recv() {
        if let Err(error) = writer.write_all(&line) {
            tracing::debug!(%error, "stdout closed");
            return;
        }
        if queue.is_empty() && writer.flush().is_err() {
            return;
        }
    }
    let _ = writer.flush();
}
