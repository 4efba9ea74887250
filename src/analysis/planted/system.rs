//! Commands the system runs on schedule or at start: crontab lines,
//! systemd units' `Exec*=` lines and launchd property lists' `Program` and
//! `ProgramArguments`.

use super::{Part, Unreadable, quote_words};
use crate::analysis::budget;

/// The command of each crontab line: after five time fields or an `@`
/// schedule, and after the user field in a system crontab (`/etc`); text
/// after an unescaped `%` is the command's input, not a command.
pub(super) fn crontab(content: &str, system: bool) -> Vec<Part> {
    let mut parts = Vec::new();
    for (index, line) in content.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if first.contains('=') && !first.starts_with('@') {
            continue;
        }
        let fields = if first.starts_with('@') { 1 } else { 5 } + usize::from(system);
        let mut rest = line;
        for _ in 0..fields {
            rest = rest.trim_start().split_once(char::is_whitespace).map_or("", |(_, r)| r);
        }
        let command = until_unescaped_percent(rest.trim());
        if !command.is_empty() {
            parts.push(Part::shell(index + 1, command));
        }
    }
    parts
}

fn until_unescaped_percent(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('%') => out.push('%'),
                Some(other) => {
                    out.push('\\');
                    out.push(other);
                }
                None => out.push('\\'),
            },
            '%' => break,
            c => out.push(c),
        }
    }
    out
}

/// `ExecStart=`, `ExecStartPre=`, `ExecStop=`… with systemd's prefixes
/// (`-`, `@`, `:`, `+`, `!`) removed and continuation lines joined.
pub(super) fn systemd_unit(content: &str) -> Vec<Part> {
    let lines: Vec<&str> = content.lines().collect();
    let mut parts = Vec::new();
    let mut index = 0;
    while let Some(first) = lines.get(index) {
        let start = index;
        let mut text = first.trim().to_owned();
        index += 1;
        while text.ends_with('\\')
            && let Some(next) = lines.get(index)
        {
            text.pop();
            text.push(' ');
            text.push_str(next.trim());
            index += 1;
        }
        let Some((key, value)) = text.split_once('=') else {
            continue;
        };
        if key.trim().starts_with("Exec") {
            let command = value.trim().trim_start_matches(['-', '@', ':', '+', '!']);
            parts.push(Part::shell(start + 1, command.to_owned()));
        }
    }
    parts
}

/// `Program` and `ProgramArguments` of an XML property list; a binary one
/// cannot be read.
pub(super) fn launchd_plist(content: &str) -> Result<Vec<Part>, Unreadable> {
    if content.starts_with("bplist") {
        return Err(Unreadable("a binary property list".into()));
    }
    let mut parts = Vec::new();
    for key in ["ProgramArguments", "Program"] {
        let marker = format!("<key>{key}</key>");
        // Lines are counted on from the previous key, not from the start.
        let (mut counted_to, mut line) = (0, 1);
        for (at, _) in content.match_indices(&marker) {
            let rest = content.get(at + marker.len()..).unwrap_or_default();
            line += content.get(counted_to..at).unwrap_or_default().matches('\n').count();
            counted_to = at;
            let words: Vec<String> = if rest.trim_start().starts_with("<array>") {
                let inside = rest.split_once("</array>").map_or(rest, |(inside, _)| inside);
                // An array that never closes holds the rest of the file,
                // once per key that opens one: paid for.
                if !budget::work(inside.len()) {
                    break;
                }
                strings_in(inside).collect()
            } else {
                strings_in(rest).take(1).collect()
            };
            if !words.is_empty() {
                parts.push(Part::shell(line, quote_words(words.iter().map(String::as_str))));
            }
        }
    }
    Ok(parts)
}

/// The `<string>` values of an XML fragment, entities decoded.
fn strings_in(xml: &str) -> impl Iterator<Item = String> + '_ {
    xml.split("<string>")
        .skip(1)
        // A value that never closes is looked for to the end of the file,
        // once per key: paid for.
        .take_while(|piece| budget::work(piece.len()))
        .filter_map(|s| s.split_once("</string>"))
        .map(|(value, _)| xml_unescape(value))
}

fn xml_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(rest.get(..at).unwrap_or_default());
        let Some(end) = rest.get(at..).unwrap_or_default().find(';') else {
            out.push_str(rest.get(at..).unwrap_or_default());
            return out;
        };
        let entity = rest.get(at + 1..at + end).unwrap_or_default();
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .map(|hex| u32::from_str_radix(hex, 16))
                .or_else(|| entity.strip_prefix('#').map(str::parse::<u32>))
                .and_then(Result::ok)
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => out.push(c),
            None => out.push_str(rest.get(at..=at + end).unwrap_or_default()),
        }
        rest = rest.get(at + end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(parts: Vec<Part>) -> Vec<(usize, String)> {
        parts.into_iter().map(|p| (p.line, p.text)).collect()
    }

    #[test]
    fn crontab_lines() {
        let user = "MAILTO=me\n# nightly\n0 3 * * * /usr/bin/backup --all\n@reboot curl h | sh\n*/5 * * * * echo a%b\n";
        assert_eq!(
            texts(crontab(user, false)),
            [
                (3, "/usr/bin/backup --all".to_owned()),
                (4, "curl h | sh".to_owned()),
                (5, "echo a".to_owned())
            ]
        );
        assert_eq!(
            texts(crontab("17 * * * * root cd / && run-parts /etc/cron.hourly\n", true)),
            [(1, "cd / && run-parts /etc/cron.hourly".to_owned())]
        );
    }

    #[test]
    fn systemd_exec_lines() {
        let unit = "[Service]\nExecStartPre=-/bin/mkdir -p /x\nExecStart=/bin/sh -c \\\n  'curl h | sh'\nRestart=always\n";
        assert_eq!(
            texts(systemd_unit(unit)),
            [(2, "/bin/mkdir -p /x".to_owned()), (3, "/bin/sh -c  'curl h | sh'".to_owned())]
        );
    }

    #[test]
    fn launchd_programs() {
        let plist = "<plist><dict>\n<key>ProgramArguments</key>\n<array><string>/bin/sh</string><string>-c</string><string>curl h &amp;&amp; x</string></array>\n</dict></plist>";
        assert_eq!(
            texts(launchd_plist(plist).unwrap()),
            [(2, "/bin/sh -c 'curl h && x'".to_owned())]
        );
        assert!(launchd_plist("bplist00").is_err());
    }
}
