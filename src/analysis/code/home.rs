//! What `~` means in interpreter code. A shell expands a leading `~` to
//! the home folder, so text handed to one (`os.system('rm -rf ~/x')`,
//! backticks, `exec`, `system`) keeps it, and so does text whose reader
//! cannot tell where it goes (a bare literal, an argv list). A file API
//! (Python's `open`, Node's `fs`, Ruby's `File.write`, PHP's
//! `file_put_contents`, Perl's `open` and `unlink`) does not: there
//! `'~/.bashrc'` is `./~/.bashrc`, a folder named `~` in the working
//! folder. Home is reached only through the language's expanders and
//! idioms (`os.path.expanduser`, `Path.home()`, `File.expand_path`,
//! `Dir.home`, `os.homedir()`, `getenv('HOME')`, `$_SERVER['HOME']`,
//! Perl's `glob('~…')`, `<~…>` and `$ENV{HOME}`), whose `~` is
//! [`EXPANDED`] until the text reaches where it is used.

/// A `~` an expander made: home wherever the text goes. No agent text
/// holds it but by writing a NUL, which reads as home too.
pub(super) const EXPANDED: &str = "\u{0}~";

/// The text with a leading `~` expanded, as `os.path.expanduser` and
/// `File.expand_path` do (`~user` included).
pub(super) fn expanded(text: &str) -> String {
    match text.strip_prefix('~') {
        Some(rest) => format!("{EXPANDED}{rest}"),
        None => text.to_owned(),
    }
}

/// The text as a shell, or a reader that cannot tell, sees it: every
/// `~` is the shell's.
pub(super) fn for_shell(text: &str) -> String {
    text.replace(EXPANDED, "~")
}

/// A path as a file API opens it: a leading `~` written in the code is a
/// folder of that name in the working folder; one an expander made is
/// home.
pub(super) fn for_file_api(path: &str) -> String {
    let path = if path.starts_with('~') { format!("./{path}") } else { path.to_owned() };
    for_shell(&path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_tilde_is_a_folder_and_an_expanded_one_home() {
        assert_eq!(for_file_api("~/.bashrc"), "./~/.bashrc");
        assert_eq!(for_file_api(&expanded("~/.bashrc")), "~/.bashrc");
        assert_eq!(for_file_api("/tmp/~x"), "/tmp/~x");
        assert_eq!(for_shell("rm -rf ~/x"), "rm -rf ~/x");
        assert_eq!(for_shell(&expanded("~")), "~");
    }
}
