//! The MCP-AQL envelope inside a `tools/call` answer line, for the benches
//! that check what they measured.

/// The JSON envelope of the answer's first text content.
pub fn of(line: &str) -> serde_json::Value {
    let answer: serde_json::Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text content: {answer}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}
