//! Fuzzes the adapter-file loader: any bytes, as the text of an adapter
//! file, must come back as a definition or as located errors, never as a
//! panic, a hang or an unbounded allocation.

#![no_main]

use libfuzzer_sys::fuzz_target;
use safety_dongle::{adapter::definition, diagnostics::SourceFile};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let source = SourceFile::new("fuzz-adapter.md", text);
    match definition::parse(&source) {
        Ok(loaded) => assert!(!loaded.definition.name.is_empty()),
        Err(errors) => {
            assert!(!errors.is_empty() && errors.iter().all(|e| e.line >= 1 && e.col >= 1))
        }
    }
});
