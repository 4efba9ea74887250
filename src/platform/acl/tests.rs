//! Security descriptors as Windows writes them for files in a user's
//! profile, on a second drive, in a shared folder, and for the data
//! folder the dongle makes.

use super::*;

const USER: &str = "S-1-5-21-3623811015-3361044348-30300820-1013";
const OTHER_USER: &str = "S-1-5-21-3623811015-3361044348-30300820-1014";

fn writers(sddl: &str) -> Writers {
    SecurityDescriptor::parse(sddl).unwrap_or_else(|e| panic!("{sddl}: {e}")).writers()
}

#[test]
fn a_file_in_the_users_profile_is_trusted() {
    // Inherited from C:\Users\name: SYSTEM, Administrators and the user.
    let sddl = format!("O:{USER}G:{USER}D:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;FA;;;{USER})");
    assert_eq!(writers(&sddl), Writers::OwnerAndAdministratorsOnly);
    let read_by_everyone = format!("O:{USER}D:(A;;FA;;;{USER})(A;;FR;;;WD)(A;;0x1200a9;;;BU)");
    assert_eq!(
        writers(&read_by_everyone),
        Writers::OwnerAndAdministratorsOnly,
        "reading and executing change nothing"
    );
}

#[test]
fn files_others_can_change_are_refused_whatever_the_right_that_allows_it() {
    // A second drive's default: Authenticated Users may modify.
    let second_drive =
        format!("O:{USER}D:AI(A;ID;FA;;;BA)(A;ID;FA;;;SY)(A;ID;0x1301bf;;;AU)(A;ID;0x1200a9;;;BU)");
    assert_eq!(writers(&second_drive), Writers::Others(vec!["S-1-5-11".into()]));
    assert!(
        writers(&second_drive).to_string().contains("Authenticated Users (S-1-5-11) can change it")
    );
    for (rights, what) in [
        ("FA", "full control"),
        ("FW", "write"),
        ("GW", "generic write"),
        ("GA", "generic all"),
        ("WD", "change the access list"),
        ("WO", "take ownership"),
        ("SD", "delete"),
        ("LC", "append"),
        ("0x2", "write data"),
    ] {
        let sddl = format!("O:{USER}D:(A;;FA;;;{USER})(A;;{rights};;;{OTHER_USER})");
        assert_eq!(writers(&sddl), Writers::Others(vec![OTHER_USER.into()]), "{what}");
    }
    assert_eq!(
        writers(&format!("O:{USER}D:(A;;FA;;;WD)")),
        Writers::Others(vec!["S-1-1-0".into()]),
        "Everyone"
    );
}

#[test]
fn what_grants_nothing_to_the_file_itself_is_not_counted_and_denials_are_not_credited() {
    // Inherit-only entries apply to what is created inside a folder.
    let inherit_only = format!("O:{USER}D:(A;;FA;;;{USER})(A;OICIIO;FA;;;CO)(A;OICIIO;GW;;;BU)");
    assert_eq!(writers(&inherit_only), Writers::OwnerAndAdministratorsOnly);
    let audit = format!("O:{USER}D:(A;;FA;;;{USER})S:(AU;SAFA;FA;;;WD)");
    assert_eq!(
        writers(&audit),
        Writers::OwnerAndAdministratorsOnly,
        "the audit list grants nothing"
    );
    let denied_after = format!("O:{USER}D:(D;;FW;;;BU)(A;;FA;;;{USER})(A;;0x1301bf;;;BU)");
    assert_eq!(
        writers(&denied_after),
        Writers::Others(vec!["S-1-5-32-545".into()]),
        "fail closed: a denial is not weighed"
    );
    assert_eq!(
        writers("O:SYG:SYD:(A;;FA;;;OW)(A;;FA;;;SY)"),
        Writers::OwnerAndAdministratorsOnly,
        "owner rights are the owner's"
    );
}

#[test]
fn no_access_list_lets_everyone_write_and_garbage_is_an_error() {
    assert_eq!(writers(&format!("O:{USER}D:NO_ACCESS_CONTROL")), Writers::Everyone);
    assert_eq!(writers(&format!("O:{USER}G:{USER}")), Writers::Everyone, "no D: section at all");
    assert_eq!(
        writers(&format!("O:{USER}D:P")),
        Writers::OwnerAndAdministratorsOnly,
        "an empty list lets nobody in"
    );
    for garbage in ["X", "O", "D:(A;;FA;;)", "D:(A;;ZZ;;;SY)", "O:S-1-5-18D:(A;;FA;;;a b)"] {
        assert!(SecurityDescriptor::parse(garbage).is_err(), "{garbage}");
    }
    assert_eq!(
        writers(&format!("O:{USER}D:(A;;FA;;;DA)")),
        Writers::Others(vec!["DA".into()]),
        "a domain alias is never trusted"
    );
}

#[test]
fn the_data_folder_belongs_to_its_user_alone_and_reads_back_so() {
    let sddl = private_folder_sddl(USER);
    assert_eq!(sddl, format!("D:P(A;OICI;FA;;;{USER})"));
    let made = SecurityDescriptor::parse(&format!("O:{USER}{sddl}")).unwrap();
    assert_eq!(made.writers(), Writers::OwnerAndAdministratorsOnly);
    assert_eq!(made.dacl.as_ref().map(Vec::len), Some(1), "nothing inherited from above");
}

#[test]
fn a_verifier_must_be_protected_and_owned_with_the_dongle() {
    let protected = |owner: &str| {
        SecurityDescriptor::parse(&format!(
            "O:{owner}D:(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;{owner})(A;;0x1200a9;;;BU)"
        ))
        .unwrap()
    };
    assert_eq!(verifier_problem(&protected(USER), Some(USER)), None);
    assert_eq!(verifier_problem(&protected("BA"), Some(USER)), None, "installed for all users");
    let foreign = verifier_problem(&protected(OTHER_USER), Some(USER)).unwrap();
    assert!(
        foreign.contains(OTHER_USER) && foreign.contains("neither the owner of safety-dongle.exe"),
        "{foreign}"
    );
    let writable =
        SecurityDescriptor::parse(&format!("O:{USER}D:(A;;FA;;;{USER})(A;;0x1301bf;;;BU)"))
            .unwrap();
    assert!(
        verifier_problem(&writable, Some(USER))
            .unwrap()
            .contains("Users (S-1-5-32-545) can change it")
    );
}
