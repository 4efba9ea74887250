//! Windows security descriptors as data: the SDDL text of a file's owner
//! and access list in, a verdict out. The dongle refuses a file that
//! anyone other than its owner, the Administrators group or SYSTEM can
//! change (as on Unix it refuses one writable by group or others), and
//! gives its data folder an access list for its user alone. Platform-
//! neutral on purpose: these decisions are unit-tested everywhere, and
//! the Windows layer only reads and writes the SDDL.
//!
//! What is read of an access list: allow entries that apply to the object
//! itself (inherit-only entries are skipped) and grant any right that can
//! change it: write or append data, delete it, change its access list or
//! its owner, or the generic write and all rights. Deny entries are not
//! credited: a list that allows a stranger to write and then denies it is
//! refused (fail closed). A missing access list lets everyone do anything,
//! and is refused.

use std::fmt;

/// SYSTEM.
const SYSTEM: &str = "S-1-5-18";
/// The built-in Administrators group.
const ADMINISTRATORS: &str = "S-1-5-32-544";

/// Rights that can change a file or what it says (`FILE_WRITE_DATA`,
/// `FILE_APPEND_DATA`, `DELETE`, `WRITE_DAC`, `WRITE_OWNER`,
/// `MAXIMUM_ALLOWED`, `GENERIC_ALL`, `GENERIC_WRITE`).
const CHANGING_RIGHTS: u32 =
    0x2 | 0x4 | 0x1_0000 | 0x4_0000 | 0x8_0000 | 0x200_0000 | 0x1000_0000 | 0x4000_0000;

/// An owner and access list, parsed from SDDL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecurityDescriptor {
    /// The owner's SID (`S-1-5-21-…`), aliases resolved.
    pub owner: Option<String>,
    /// `None`: no access list at all (everyone may do anything).
    pub dacl: Option<Vec<Ace>>,
}

/// One access control entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ace {
    pub allow: bool,
    /// Applies only to objects created inside (a folder's `IO` flag).
    pub inherit_only: bool,
    pub rights: u32,
    /// The trustee's SID, aliases resolved (`BA` is `S-1-5-32-544`).
    pub trustee: String,
}

/// Why an SDDL text could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable security descriptor: {0}")]
pub struct SddlError(String);

/// Who other than the owner, Administrators and SYSTEM may change the
/// file, as SIDs; a file with an empty answer is safe to trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writers {
    OwnerAndAdministratorsOnly,
    /// Everyone may, for there is no access list.
    Everyone,
    Others(Vec<String>),
}

impl fmt::Display for Writers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OwnerAndAdministratorsOnly => {
                f.write_str("only its owner, Administrators and SYSTEM can change it")
            }
            Self::Everyone => f.write_str("it has no access list, so everyone can change it"),
            Self::Others(sids) => write!(
                f,
                "{} can change it",
                sids.iter().map(|sid| describe_sid(sid)).collect::<Vec<_>>().join(", ")
            ),
        }
    }
}

impl SecurityDescriptor {
    /// Reads `O:…G:…D:…` SDDL (the group and any audit list are ignored).
    pub fn parse(sddl: &str) -> Result<Self, SddlError> {
        let mut owner = None;
        let mut dacl = None;
        for (tag, value) in sections(sddl)? {
            match tag {
                'O' => owner = Some(resolve_alias(value)?),
                'D' => dacl = parse_dacl(value)?,
                _ => {}
            }
        }
        Ok(Self { owner, dacl })
    }

    /// Who besides the owner, Administrators and SYSTEM may change it.
    pub fn writers(&self) -> Writers {
        let Some(dacl) = &self.dacl else { return Writers::Everyone };
        let trusted = |sid: &str| {
            sid == SYSTEM
                || sid == ADMINISTRATORS
                || self.owner.as_deref() == Some(sid)
                || sid == OWNER_RIGHTS
        };
        let mut others: Vec<String> = dacl
            .iter()
            .filter(|ace| {
                ace.allow
                    && !ace.inherit_only
                    && ace.rights & CHANGING_RIGHTS != 0
                    && !trusted(&ace.trustee)
            })
            .map(|ace| ace.trustee.clone())
            .collect();
        others.dedup();
        if others.is_empty() {
            Writers::OwnerAndAdministratorsOnly
        } else {
            Writers::Others(others)
        }
    }
}

/// "Owner rights": whoever owns the object, whatever their SID.
const OWNER_RIGHTS: &str = "S-1-3-4";

/// The access list the data folder is given: full control for `user`
/// alone, inherited by what is created inside, none from the folder above
/// (`P`).
pub fn private_folder_sddl(user: &str) -> String {
    format!("D:P(A;OICI;FA;;;{user})")
}

/// A verifier program is trusted when only its owner, Administrators and
/// SYSTEM can change it and it belongs to whoever owns `safety-dongle.exe`
/// (they were installed together) or to Administrators or SYSTEM.
pub fn verifier_problem(
    verifier: &SecurityDescriptor,
    dongle_owner: Option<&str>,
) -> Option<String> {
    let writers = verifier.writers();
    if writers != Writers::OwnerAndAdministratorsOnly {
        return Some(format!("is not protected: {writers}"));
    }
    let owner = verifier.owner.as_deref()?;
    let trusted = owner == SYSTEM || owner == ADMINISTRATORS || Some(owner) == dongle_owner;
    (!trusted).then(|| {
        format!(
            "is owned by {}, neither the owner of safety-dongle.exe nor Administrators or SYSTEM",
            describe_sid(owner)
        )
    })
}

/// `O:`, `G:`, `D:` and `S:` sections in order.
fn sections(sddl: &str) -> Result<Vec<(char, &str)>, SddlError> {
    let mut found = Vec::new();
    let mut rest = sddl.trim();
    while !rest.is_empty() {
        let tag = rest.chars().next().ok_or_else(|| SddlError("empty".into()))?;
        let body = rest
            .get(1..)
            .and_then(|r| r.strip_prefix(':'))
            .ok_or_else(|| SddlError(format!("expected a section at '{rest}'")))?;
        // A section ends where the next `X:` starts outside parentheses.
        let mut depth = 0usize;
        let mut end = body.len();
        let bytes = body.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'(' => depth += 1,
                b')' => depth = depth.saturating_sub(1),
                b'O' | b'G' | b'D' | b'S'
                    if depth == 0 && bytes.get(i + 1) == Some(&b':') && i > 0 =>
                {
                    end = i;
                    break;
                }
                _ => {}
            }
        }
        found.push((tag, body.get(..end).unwrap_or_default()));
        rest = body.get(end..).unwrap_or_default();
    }
    Ok(found)
}

/// `PAI(A;;FA;;;SY)(…)`: flags, then entries; `NO_ACCESS_CONTROL` is none.
fn parse_dacl(value: &str) -> Result<Option<Vec<Ace>>, SddlError> {
    let Some(start) = value.find('(') else {
        return if value.contains("NO_ACCESS_CONTROL") { Ok(None) } else { Ok(Some(Vec::new())) };
    };
    if value.get(..start).unwrap_or_default().contains("NO_ACCESS_CONTROL") {
        return Ok(None);
    }
    let mut aces = Vec::new();
    for entry in
        value.get(start..).unwrap_or_default().split(')').map(str::trim).filter(|e| !e.is_empty())
    {
        let entry = entry
            .strip_prefix('(')
            .ok_or_else(|| SddlError(format!("entry '{entry}' does not start with '('")))?;
        aces.push(parse_ace(entry)?);
    }
    Ok(Some(aces))
}

/// `type;flags;rights;object;inherited object;trustee[;attributes]`.
fn parse_ace(entry: &str) -> Result<Ace, SddlError> {
    let fields: Vec<&str> = entry.split(';').collect();
    let [kind, flags, rights, _, _, trustee, ..] = fields.as_slice() else {
        return Err(SddlError(format!("entry '{entry}' has fewer than six fields")));
    };
    let allow = match *kind {
        "A" | "OA" | "XA" | "ZA" => true,
        "D" | "OD" | "XD" => false,
        // Audit, alarm, label and other entries grant nothing.
        _ => {
            return Ok(Ace { allow: false, inherit_only: true, rights: 0, trustee: String::new() });
        }
    };
    Ok(Ace {
        allow,
        inherit_only: two_letter_codes(flags).any(|flag| flag == "IO"),
        rights: parse_rights(rights)?,
        trustee: resolve_alias(trustee)?,
    })
}

fn two_letter_codes(text: &str) -> impl Iterator<Item = &str> {
    text.as_bytes().chunks(2).filter_map(|pair| std::str::from_utf8(pair).ok())
}

/// A hex mask, or two-letter rights.
fn parse_rights(rights: &str) -> Result<u32, SddlError> {
    if let Some(hex) = rights.strip_prefix("0x").or_else(|| rights.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16)
            .map_err(|_| SddlError(format!("bad rights mask '{rights}'")));
    }
    two_letter_codes(rights).try_fold(0u32, |mask, code| {
        let bits = match code {
            "GA" => 0x1000_0000,
            "GR" => 0x8000_0000,
            "GW" => 0x4000_0000,
            "GX" => 0x2000_0000,
            "RC" => 0x2_0000,
            "SD" => 0x1_0000,
            "WD" => 0x4_0000,
            "WO" => 0x8_0000,
            "RP" => 0x10,
            "WP" => 0x20,
            "CC" => 0x1,
            "DC" => 0x2,
            "LC" => 0x4,
            "SW" => 0x8,
            "LO" => 0x80,
            "DT" => 0x40,
            "CR" => 0x100,
            "FA" => 0x1F_01FF,
            "FR" => 0x12_0089,
            "FW" => 0x12_0116,
            "FX" => 0x12_00A0,
            "KA" => 0xF_003F,
            "KR" => 0x2_0019,
            "KW" => 0x2_0006,
            "KX" => 0x2_0019,
            other => return Err(SddlError(format!("unknown right '{other}'"))),
        };
        Ok(mask | bits)
    })
}

/// Well-known two-letter trustees as SIDs; SIDs as they are.
fn resolve_alias(trustee: &str) -> Result<String, SddlError> {
    if trustee.starts_with("S-") {
        return Ok(trustee.to_owned());
    }
    let sid = match trustee {
        "SY" => SYSTEM,
        "BA" => ADMINISTRATORS,
        "BU" => "S-1-5-32-545",
        "BG" => "S-1-5-32-546",
        "PU" => "S-1-5-32-547",
        "WD" => "S-1-1-0",
        "AU" => "S-1-5-11",
        "IU" => "S-1-5-4",
        "NU" => "S-1-5-2",
        "AN" => "S-1-5-7",
        "NS" => "S-1-5-20",
        "LS" => "S-1-5-19",
        "CO" => "S-1-3-0",
        "CG" => "S-1-3-1",
        "OW" => OWNER_RIGHTS,
        "AC" => "S-1-15-2-1",
        "RC" => "S-1-5-12",
        "PS" => "S-1-5-10",
        "SU" => "S-1-5-6",
        "BO" => "S-1-5-32-551",
        "SO" => "S-1-5-32-549",
        "AO" => "S-1-5-32-548",
        "RD" => "S-1-5-32-555",
        "LU" => "S-1-5-32-559",
        // Domain and other aliases stay as written: never trusted, so an
        // entry letting one of them write is refused.
        other if !other.is_empty() && other.chars().all(|c| c.is_ascii_alphanumeric()) => {
            return Ok(other.to_owned());
        }
        other => return Err(SddlError(format!("unreadable trustee '{other}'"))),
    };
    Ok(sid.to_owned())
}

/// A SID with its well-known name, if it has one.
fn describe_sid(sid: &str) -> String {
    let name = match sid {
        "S-1-1-0" => "Everyone",
        "S-1-5-11" => "Authenticated Users",
        "S-1-5-32-545" => "Users",
        "S-1-5-32-546" => "Guests",
        "S-1-5-4" => "Interactive users",
        "S-1-5-7" => "Anonymous",
        _ => return sid.to_owned(),
    };
    format!("{name} ({sid})")
}

#[cfg(test)]
mod tests;
