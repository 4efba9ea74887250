//! Lowercase hex: how the dongle writes every hash and salt it stores or
//! shows, and reads them back. A leaf: it imports nothing of the crate.

/// `bytes` as lowercase hex, two digits a byte.
pub fn encode(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes `text` spells in hex (either case), or `None` if it is not
/// an even number of hex digits.
pub fn decode(text: &str) -> Option<Vec<u8>> {
    // Digits only: `from_str_radix` alone would also take a sign (`+1`).
    if !text.len().is_multiple_of(2) || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_and_anything_else_is_refused() {
        let bytes = [0x00, 0x7f, 0xa5, 0xff];
        assert_eq!(encode(&bytes), "007fa5ff");
        assert_eq!(decode("007fa5ff"), Some(bytes.to_vec()));
        assert_eq!(decode("007FA5FF"), Some(bytes.to_vec()));
        for bad in ["0", "zz", "0g", "é0", "+1"] {
            assert_eq!(decode(bad), None, "{bad:?}");
        }
    }
}
