//! SQL (and MongoDB shell code) handed to a database client: split into
//! statements, each recorded as a command whose program is its first
//! keyword (`DROP TABLE users` is `drop table users`), so the same
//! patterns match it however the client was reached. `DELETE` and
//! `UPDATE` without `WHERE`, and every `TRUNCATE`, are a fact.

use super::{Builder, Command, Fact, preview};

/// Database clients, and the flags that carry a statement.
const CLIENTS: &[(&str, &[&str])] = &[
    ("psql", &["-c", "--command"]),
    ("pgcli", &["-c", "--command"]),
    ("mysql", &["-e", "--execute"]),
    ("mariadb", &["-e", "--execute"]),
    ("mycli", &["-e", "--execute"]),
    ("sqlcmd", &["-q", "-Q", "--query"]),
    ("clickhouse-client", &["-q", "--query"]),
    ("clickhouse", &["-q", "--query"]),
    ("cqlsh", &["-e", "--execute"]),
    ("snowsql", &["-q", "--query"]),
    ("cockroach", &["-e", "--execute"]),
    ("usql", &["-c", "--command"]),
    ("sqlite3", &["-cmd"]),
    ("sqlite", &["-cmd"]),
    ("litecli", &["-e", "--execute"]),
    ("duckdb", &["-c", "-cmd"]),
    ("mongosh", &["--eval"]),
    ("mongo", &["--eval"]),
];

const SQL_KEYWORDS: [&str; 20] = [
    "select", "insert", "update", "delete", "drop", "create", "alter", "truncate", "grant",
    "revoke", "with", "merge", "replace", "copy", "vacuum", "begin", "exec", "execute", "call",
    "rename",
];

pub fn is_client(program: &str) -> bool {
    CLIENTS.iter().any(|(name, _)| *name == program)
}

/// Whether a command's program is a statement keyword: the command is
/// an SQL statement (or written as one).
pub(super) fn is_keyword(program: &str) -> bool {
    SQL_KEYWORDS.contains(&program)
}

/// Whether text reads as SQL: it starts with a statement keyword.
pub fn looks_like_sql(text: &str) -> bool {
    let first =
        text.trim_start().split(|c: char| !c.is_alphanumeric()).next().unwrap_or("").to_lowercase();
    is_keyword(&first)
}

/// Statements a client command carries inline: `psql -c`, `mysql -e`,
/// `sqlite3 db.sqlite "…"`, `mongosh --eval`.
pub(super) fn inline(builder: &mut Builder, command: &Command) {
    let Some((_, flags)) = CLIENTS.iter().find(|(name, _)| *name == command.program) else {
        return;
    };
    let argv = &command.argv;
    let mut texts: Vec<String> = argv
        .windows(2)
        .filter_map(|w| match w {
            [flag, text] if flags.contains(&flag.as_str()) => Some(text.clone()),
            _ => None,
        })
        .collect();
    texts.extend(argv.iter().filter_map(|w| {
        w.split_once('=').filter(|(name, _)| flags.contains(name)).map(|(_, v)| v.to_owned())
    }));
    if matches!(command.program.as_str(), "sqlite3" | "sqlite" | "duckdb") {
        texts.extend(command.positionals.iter().skip(1).cloned());
    }
    for text in texts {
        statements(builder, &text, &command.program);
    }
}

/// Records each statement of `text` as a command.
pub(super) fn statements(builder: &mut Builder, text: &str, via: &str) {
    if via.starts_with("mongo") {
        mongo(builder, text, via);
        return;
    }
    for statement in split(text) {
        let tokens: Vec<String> = statement
            .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ','))
            .map(|t| t.trim_matches(|c| matches!(c, '"' | '`' | '\'' | '[' | ']')).to_lowercase())
            .filter(|t| !t.is_empty())
            .collect();
        let Some(first) = tokens.first() else { continue };
        let unbounded = match first.as_str() {
            "delete" | "update" if !tokens.iter().any(|t| t == "where") => Some("without WHERE"),
            "truncate" => Some("empties every row"),
            _ => None,
        };
        if let Some(unbounded) = unbounded {
            builder.fact(
                Fact::UnboundedSqlWrite,
                format!("{} {unbounded}: {}", first.to_uppercase(), preview(&statement)),
            );
        }
        builder.command(Command::new(tokens, false, false, Some(format!("{via} SQL"))));
    }
}

/// Statements split at `;` outside quotes, comments removed.
fn split(text: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '\'' | '"' | '`') => {
                quote = Some(c);
                current.push(c);
            }
            (None, '-') if chars.peek() == Some(&'-') => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        break;
                    }
                }
                current.push(' ');
            }
            (None, '/') if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for skipped in chars.by_ref() {
                    if last == '*' && skipped == '/' {
                        break;
                    }
                    last = skipped;
                }
                current.push(' ');
            }
            (None, ';') => statements.push(std::mem::take(&mut current)),
            (None, c) => current.push(c),
        }
    }
    statements.push(current);
    statements.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
}

/// MongoDB shell code: `dropDatabase()`, `.drop()`, `deleteMany({})`.
fn mongo(builder: &mut Builder, code: &str, via: &str) {
    let lower: String = code.to_lowercase().split_whitespace().collect();
    let record = |builder: &mut Builder, tokens: &[&str]| {
        builder.command(Command::new(
            tokens.iter().map(|t| (*t).to_owned()).collect(),
            false,
            false,
            Some(format!("{via} --eval")),
        ));
    };
    if lower.contains("dropdatabase(") {
        record(builder, &["drop", "database"]);
    }
    if lower.contains(".drop(") {
        record(builder, &["drop", "collection"]);
    }
    for call in ["deletemany({})", "remove({})", "deletemany()", "updatemany({}"] {
        if lower.contains(call) {
            record(builder, &["delete", "from", "collection"]);
            builder.fact(Fact::UnboundedSqlWrite, format!("{call} matches every document"));
        }
    }
}
