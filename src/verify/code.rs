//! Checking a code typed back by a human against the salted hash the
//! verifier sent. The dongle never sees a plaintext code except this one
//! submission, which it hashes and forgets.
//!
//! Input is normalised the Crockford way: case, spaces and hyphens do not
//! matter, `O` reads as `0` and `I`/`L` as `1`. Hashes are compared in
//! constant time.

use crate::{
    hex,
    redact::{CODE_ALPHABET, CODE_CHARS},
    store::records::CodeHash,
};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The canonical form of a typed code, or `None` if it cannot be one.
pub fn normalize(typed: &str) -> Option<String> {
    let canonical: String = typed
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '-')
        .map(|c| match c.to_ascii_uppercase() {
            'O' => '0',
            'I' | 'L' => '1',
            other => other,
        })
        .collect();
    (canonical.len() == CODE_CHARS && canonical.chars().all(|c| CODE_ALPHABET.contains(c)))
        .then_some(canonical)
}

/// Whether `typed` is the code behind `code` (hex, as stored).
pub fn matches(code: &CodeHash, typed: &str) -> bool {
    let (Some(salt), Some(expected), Some(code)) =
        (hex::decode(&code.salt), hex::decode(&code.hash), normalize(typed))
    else {
        return false;
    };
    let mut hasher = Sha256::new();
    hasher.update(&salt);
    hasher.update(code.as_bytes());
    let actual = hasher.finalize();
    actual.as_slice().ct_eq(&expected).into()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn hash(salt: &[u8], code: &str) -> String {
        let mut hasher = Sha256::new();
        hasher.update(salt);
        hasher.update(code.as_bytes());
        crate::hex::encode(&hasher.finalize())
    }

    /// What the verifier would send for `code` with `salt`.
    fn code_hash(salt: &[u8], code: &str) -> CodeHash {
        CodeHash { salt: crate::hex::encode(salt), hash: hash(salt, code) }
    }

    /// A code with its salted hash, as the verifier would send them.
    pub(crate) fn fresh() -> (String, CodeHash) {
        let code = "JM9CK2C60MTH0WX8EGCRQ81DDT";
        (code.to_owned(), code_hash(&[7u8; 16], code))
    }

    #[test]
    fn typed_codes_are_normalised() {
        let code = "JM9CK2C60MTH0WX8EGCRQ81DDT";
        assert_eq!(normalize("jm9ck-2c60m-th0wx-8egcr-q81dd-t").as_deref(), Some(code));
        assert_eq!(normalize(" JM9CK 2C6OM TH0WX 8EGCR Q8IDD T ").as_deref(), Some(code));
        assert_eq!(normalize("JM9CK-2C60M"), None);
        assert_eq!(normalize("UUUUUUUUUUUUUUUUUUUUUUUUUU"), None);
    }

    #[test]
    fn only_the_right_code_matches() {
        let stored = code_hash(&[9u8; 16], "JM9CK2C60MTH0WX8EGCRQ81DDT");
        assert!(matches(&stored, "jm9ck-2c60m-th0wx-8egcr-q81dd-t"));
        assert!(!matches(&stored, "JM9CK-2C60M-TH0WX-8EGCR-Q81DD-V"));
        let bad_salt = CodeHash { salt: "zz".into(), ..stored.clone() };
        assert!(!matches(&bad_salt, "JM9CK2C60MTH0WX8EGCRQ81DDT"));
        let no_hash = CodeHash { hash: String::new(), ..stored.clone() };
        assert!(!matches(&no_hash, "JM9CK2C60MTH0WX8EGCRQ81DDT"));
        let swapped = CodeHash { salt: stored.hash.clone(), hash: stored.salt.clone() };
        assert!(!matches(&swapped, "JM9CK2C60MTH0WX8EGCRQ81DDT"));
    }
}
