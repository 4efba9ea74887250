//! Verification codes: 130 bits from the operating system's CSPRNG,
//! written in Crockford base32 (no I, L, O or U) in groups of five, and
//! the salted SHA-256 that is all the dongle ever receives.

use sha2::{Digest, Sha256};

const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Characters in a code: 26 x 5 bits = 130 bits of entropy.
pub const CODE_CHARS: usize = 26;

/// A code in canonical form (26 upper-case Crockford characters).
pub struct Code(String);

impl Code {
    pub fn generate() -> Result<Self, String> {
        let mut bytes = [0u8; 17];
        getrandom::fill(&mut bytes).map_err(|e| format!("the OS random source failed: {e}"))?;
        let mut bits: u128 = 0;
        let mut available = 0u32;
        let mut pending = bytes.iter();
        let mut out = String::with_capacity(CODE_CHARS);
        while out.len() < CODE_CHARS {
            if available < 5 {
                let Some(&byte) = pending.next() else { break };
                bits = (bits << 8) | u128::from(byte);
                available += 8;
            }
            let index = (bits >> (available - 5)) & 0x1f;
            available -= 5;
            bits &= (1u128 << available) - 1;
            #[expect(
                clippy::indexing_slicing,
                reason = "index is five bits, ALPHABET has 32 letters"
            )]
            out.push(char::from(ALPHABET[index as usize]));
        }
        Ok(Self(out))
    }

    /// `ABCDE-FGHJK-MNPQR-STVWX-YZ012-3`, as shown to humans.
    pub fn display(&self) -> String {
        self.0
            .as_bytes()
            .chunks(5)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect::<Vec<_>>()
            .join("-")
    }

    /// SHA-256 of the salt followed by the canonical code.
    pub fn salted_hash(&self, salt: &[u8]) -> [u8; 32] {
        let mut hasher = Sha256::new();
        hasher.update(salt);
        hasher.update(self.0.as_bytes());
        hasher.finalize().into()
    }
}

pub fn new_salt() -> Result<[u8; 16], String> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| format!("the OS random source failed: {e}"))?;
    Ok(salt)
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_26_crockford_characters_in_groups_of_five() {
        let code = Code::generate().unwrap();
        assert_eq!(code.0.len(), CODE_CHARS);
        assert!(code.0.bytes().all(|b| ALPHABET.contains(&b)));
        let shown = code.display();
        assert_eq!(shown.len(), 26 + 5);
        assert!(shown.split('-').take(5).all(|g| g.len() == 5));
    }

    #[test]
    fn codes_differ_and_hashes_depend_on_the_salt() {
        let (a, b) = (Code::generate().unwrap(), Code::generate().unwrap());
        assert_ne!(a.0, b.0);
        assert_ne!(a.salted_hash(&[1; 16]), a.salted_hash(&[2; 16]));
        let mut hasher = Sha256::new();
        hasher.update([7u8; 16]);
        hasher.update(a.0.as_bytes());
        assert_eq!(a.salted_hash(&[7; 16]), <[u8; 32]>::from(hasher.finalize()));
    }
}
