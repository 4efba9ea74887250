//! One MCP peer over stdio for the benches that drive the release binary
//! (or another server) request by request: spawned, initialised, asked,
//! and killed when dropped.

use std::{
    io::{BufRead, BufReader, Write},
    process::{Child, ChildStdin, ChildStdout, Command, Stdio},
};

pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    pub fn spawn(command: &mut Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn: {e}"));
        let stdin = child.stdin.take().unwrap_or_else(|| panic!("stdin"));
        let stdout = BufReader::new(child.stdout.take().unwrap_or_else(|| panic!("stdout")));
        let mut peer = Self { child, stdin, stdout };
        peer.request(0, r#""method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}"#);
        peer.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        peer
    }

    pub fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
        self.stdin.write_all(b"\n").unwrap_or_else(|e| panic!("write: {e}"));
        self.stdin.flush().unwrap_or_else(|e| panic!("flush: {e}"));
    }

    /// Sends a request and returns the answer's line, skipping notifications.
    pub fn request(&mut self, id: usize, body: &str) -> String {
        self.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},{body}}}"#));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).unwrap_or_else(|e| panic!("read: {e}"));
            assert!(n > 0, "the server closed stdout");
            // Cheap filter first: only answers carry "result" or "error".
            if (line.contains("\"result\"") || line.contains("\"error\""))
                && serde_json::from_str::<serde_json::Value>(&line)
                    .is_ok_and(|answer| answer["id"] == id)
            {
                return line;
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
