//! The files a program writes by its own options and operands, not by a
//! redirection (the walk records those) nor by a script it is given
//! (`sed.rs` reads sed's `-i` and `w`): a download's output file or
//! folder, `sort -o`, an in-place edit (`perl -i`, `yq -i`, `dos2unix`,
//! `gzip`, which replaces each file with its compressed form), an archive
//! created, a copy's destination, a key made. Each is a file written, for
//! `write:` rules, and, unless the program only appends to it
//! ([`appends`]) or is a harness's file-writing tool (judged as the write
//! it reports), an `overwrite` effect (`effects`).
//!
//! A folder a program writes named files into (`wget -P DIR`, `curl
//! --output-dir DIR`, `7z x -oDIR`) is written as all its entries
//! (`DIR/*`), as an extracted archive is.

use super::{
    Command, code,
    effects::{entries_of, sources_and_destination},
    options,
    words::{RUN_TIME_VALUE, normalize_path},
};

/// Files `command` writes, by its well-known options and positions.
pub(super) fn files_written_by(command: &Command) -> Vec<String> {
    let argv = &command.argv;
    let args = argv.get(1..).unwrap_or_default();
    let after = |flags: &[&str]| values_of(args, flags);
    let files = |paths: &[String]| outputs(paths.iter().map(|path| normalize_path(path)).collect());
    match command.program.as_str() {
        "curl" => {
            let mut written = short_values(&options::CURL.parse(args), &["-o", "-D", "-c"]);
            written.extend(after(&["--output", "--dump-header", "--cookie-jar", "--trace"]));
            written.extend(after(&["--output-dir"]).iter().map(|folder| entries_of(folder)));
            outputs(written)
        }
        "wget" => {
            let parsed = options::WGET.parse(args);
            let mut written = short_values(&parsed, &["-O", "-o"]);
            written.extend(after(&["--output-document", "--output-file"]));
            let folders =
                short_values(&parsed, &["-P"]).into_iter().chain(after(&["--directory-prefix"]));
            written.extend(folders.map(|folder| entries_of(&folder)));
            outputs(written)
        }
        "sort" | "iconv" | "base64" => {
            let grammar = match command.program.as_str() {
                "sort" => &SORT,
                "iconv" => &ICONV,
                _ => &BASE64,
            };
            let mut written = short_values(&grammar.parse(args), &["-o"]);
            written.extend(after(&["--output"]));
            outputs(written)
        }
        // Compilers and converters that take no clusters: `-o FILE`,
        // `-oFILE`; go's single-dash options (`-overlay`) are whole words.
        "gcc" | "cc" | "g++" | "c++" | "clang" | "clang++" | "rustc" | "pandoc" | "go" => {
            let mut written = after(&["-o", "--output"]);
            if command.program != "go" {
                written.extend(glued(args, "-o"));
            }
            outputs(written)
        }
        "openssl" => outputs(after(&["-out", "-keyout"])),
        "uniq" => files(operands(args, "fsw").get(1..2).unwrap_or_default()),
        "xxd" if args.iter().any(|word| word == "-r" || word == "-revert") => {
            files(operands(args, "cglos").get(1..2).unwrap_or_default())
        }
        "patch" => {
            let mut written = after(&["-o", "--output", "-r", "--reject-file"]);
            if written.is_empty() {
                written.extend(operands(args, "pdioFrBDVYzg").first().map(|f| normalize_path(f)));
            }
            outputs(written)
        }
        "7z" | "7za" | "7zz" | "7zr" if matches!(command.subcommand(), Some("x" | "e")) => {
            glued(args, "-o").iter().map(|folder| entries_of(folder)).collect()
        }
        program if replaces_in_place(program, command) => files(&command.positionals),
        "yq" if command.flags.iter().any(|f| f == "-i" || f == "--inplace") => {
            let expression_at =
                usize::from(matches!(command.subcommand(), Some("e" | "eval" | "ea" | "eval-all")));
            files(command.positionals.get(expression_at + 1..).unwrap_or_default())
        }
        "tee" | "sponge" => files(&command.positionals),
        // sed's own reader (`sed.rs`) finds what `-i` and `w` write.
        "perl" => files(&perl_edits_in_place(args)),
        // An archive created is written (`host:file` is one on that host,
        // unless `--force-local`). Extracting one writes its entries into
        // the folder it is given, over what is there (`tar xf a.tar -C ~`
        // can replace `~/.bashrc`); without one, into the working folder,
        // by names only the archive knows.
        "tar" | "bsdtar" | "gtar" => {
            let parsed = options::tar(args);
            let archive = parsed.value("-f").map(normalize_path);
            if ["-c", "-r", "-u", "-A"].iter().any(|flag| parsed.has(flag)) {
                match archive {
                    Some(archive) if parsed.has("--force-local") => outputs(vec![archive]),
                    Some(archive) if archive != "-" => vec![archive],
                    _ => Vec::new(),
                }
            } else {
                parsed
                    .value("-C")
                    .filter(|_| parsed.has("-x"))
                    .map(entries_of)
                    .into_iter()
                    .collect()
            }
        }
        "unzip" => {
            let lists_only = command
                .flags
                .iter()
                .any(|f| matches!(f.as_str(), "-l" | "-v" | "-t" | "-Z" | "-p" | "-z"));
            let folder = args.windows(2).find_map(|pair| match pair {
                [flag, folder] if flag == "-d" => Some(entries_of(folder)),
                _ => None,
            });
            folder.filter(|_| !lists_only).into_iter().collect()
        }
        // A remote path (`host:file`) is another machine's.
        "rsync" | "scp" => copied_to(command),
        "cp" | "mv" | "install" | "ln" => outputs(copied_to(command)),
        "dd" => command
            .positionals
            .iter()
            .filter_map(|p| p.strip_prefix("of="))
            .map(normalize_path)
            .collect(),
        "chmod" => Vec::new(),
        // `-R HOST` takes a host's keys out of the known hosts file (`-f`,
        // else the user's), so that a changed key is no longer noticed.
        "ssh-keygen" if command.flags.iter().any(|flag| flag == "-R") => {
            let file = after(&["-f"]);
            if file.is_empty() { vec![normalize_path("~/.ssh/known_hosts")] } else { file }
        }
        // A key made, converted or given a new passphrase is written at
        // `-f`, its public half beside it; `-l`, `-y`, `-e`, `-B` and
        // `-Y` only read the key to print or sign.
        "ssh-keygen"
            if !command.flags.iter().any(|flag| {
                !flag.starts_with("--")
                    && flag
                        .strip_prefix('-')
                        .is_some_and(|letters| letters.contains(['l', 'y', 'e', 'B', 'Y']))
            }) =>
        {
            after(&["-f"]).into_iter().flat_map(|key| [format!("{key}.pub"), key]).collect()
        }
        // A tool's only argument is the file it writes, whatever its name
        // (`write_file Makefile`); among several, the path-like ones.
        program if code::is_file_writing_tool(program) => {
            let only = command.positionals.len() == 1;
            command
                .positionals
                .iter()
                .filter(|p| only || p.contains('/') || p.contains('.'))
                .cloned()
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The short options of these programs that take a value (`sort -uo
/// out.txt`, `iconv -f latin1 -t utf-8 -o out`, BSD `base64 -i in -o
/// out`).
const SORT: options::Grammar = options::tool("kotST", &[]);
const ICONV: options::Grammar = options::tool("fto", &[]);
const BASE64: options::Grammar = options::tool("iow", &[]);

/// The values given to the short options `flags`, normalised.
fn short_values(parsed: &options::Parsed, flags: &[&str]) -> Vec<String> {
    parsed.values(flags).map(normalize_path).collect()
}

/// Whether `command` only adds to the end of what it writes (`tee -a`,
/// `sponge -a`), which loses nothing there.
pub(super) fn appends(command: &Command) -> bool {
    matches!(command.program.as_str(), "tee" | "sponge")
        && command.argv.iter().skip(1).any(|word| word == "-a" || word == "--append")
}

/// The files `perl -i` edits: the words after its code (`-e CODE`) or
/// its script. In a cluster of letters, one that takes a value takes the
/// rest of the word (`-Mstrict` loads a module, `-pi.bak` edits with a
/// backup, `-pie` too, with the backup suffix `e`), and `-e`/`-E` the
/// next word.
fn perl_edits_in_place(args: &[String]) -> Vec<String> {
    let (mut in_place, mut code_given) = (false, false);
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        let Some(letters) = word.strip_prefix('-').filter(|l| !l.is_empty() && !l.starts_with('-'))
        else {
            if word.starts_with("--") {
                continue;
            }
            // The script, unless code was given: then the first file.
            let files = std::iter::once(word).filter(|_| code_given).chain(words);
            return if in_place { files.cloned().collect() } else { Vec::new() };
        };
        for letter in letters.chars() {
            match letter {
                'i' => {
                    in_place = true;
                    break;
                }
                'e' | 'E' => {
                    code_given = true;
                    words.next();
                    break;
                }
                'M' | 'm' | 'I' | 'x' | 'd' | 'D' | 'l' | '0' | 'C' | 'F' | 'V' => break,
                _ => {}
            }
        }
    }
    if in_place { words.cloned().collect() } else { Vec::new() }
}

/// Compressors that replace each file named with its compressed (or
/// expanded) form, and converters that rewrite files in place; not when
/// they write to stdout, keep the original, or only list or test.
/// zstd and lz4 keep the original unless told `--rm`.
fn replaces_in_place(program: &str, command: &Command) -> bool {
    // A long option by its name, a short one as a letter of any cluster.
    let given = |long: &[&str], short: &str| {
        command.argv.iter().skip(1).any(|word| match word.strip_prefix("--") {
            Some(_) => long.contains(&word.as_str()),
            None => word
                .strip_prefix('-')
                .is_some_and(|letters| letters.chars().any(|letter| short.contains(letter))),
        })
    };
    match program {
        "gzip" | "gunzip" | "bzip2" | "bunzip2" | "xz" | "unxz" | "lzma" | "unlzma"
        | "compress" | "uncompress" => {
            !given(&["--stdout", "--to-stdout", "--keep", "--list", "--test"], "cklt")
        }
        "zstd" | "unzstd" | "lz4" => given(&["--rm"], "") && !given(&["--stdout"], "c"),
        "dos2unix" | "unix2dos" | "mac2unix" | "unix2mac" => true,
        _ => false,
    }
}

/// The values of the long or single-dash options in `flags`, written
/// `--flag VALUE` or `--flag=VALUE`.
fn values_of(args: &[String], flags: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            break;
        }
        if flags.contains(&word.as_str()) {
            found.extend(words.next().map(|value| normalize_path(value)));
        } else if let Some((flag, value)) = word.split_once('=')
            && flags.contains(&flag)
            && flag.starts_with("--")
        {
            found.push(normalize_path(value));
        }
    }
    found
}

/// Values glued to a short option (`-Ofile`, `-o/tmp/x`).
fn glued(args: &[String], flag: &str) -> Vec<String> {
    args.iter()
        .take_while(|word| *word != "--")
        .filter_map(|word| word.strip_prefix(flag).filter(|value| !value.is_empty()))
        .map(normalize_path)
        .collect()
}

/// The operands of a program whose short options in `valued` take the
/// next word when nothing is glued to them.
fn operands(args: &[String], valued: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut words = args.iter();
    let mut options_done = false;
    while let Some(word) = words.next() {
        if options_done || !word.starts_with('-') || word == "-" {
            found.push(word.clone());
        } else if word == "--" {
            options_done = true;
        } else if word.strip_prefix('-').is_some_and(|letters| {
            let mut letters = letters.chars();
            letters.next().is_some_and(|letter| valued.contains(letter)) && letters.next().is_none()
        }) {
            words.next();
        }
    }
    found
}

/// Files a program writes on this machine, but stdout (`-`). A colon
/// in a relative path names no host here (`curl -o localhost:9200/x`
/// writes a folder named `localhost:9200` in the project): such a path
/// is written `./…`, which no reader takes for a remote one.
fn outputs(written: Vec<String>) -> Vec<String> {
    written
        .into_iter()
        .filter(|file| file != "-")
        .map(|file| {
            let first = file.split('/').next().unwrap_or_default();
            let host_like = first.split_once(':').is_some_and(|(host, _)| host.len() > 1);
            if host_like && !file.starts_with(['/', '~', '.']) && !file.contains("://") {
                format!("./{file}")
            } else {
                file
            }
        })
        .collect()
}

/// Whether a copy takes folders whole (`cp -r`, `cp -a`, `rsync -a`,
/// `scp -r`): then what lands in the destination holds entries by names
/// only the source knows.
fn copies_trees(command: &Command) -> bool {
    let whole: &[&str] = match command.program.as_str() {
        "cp" => &["-r", "-R", "-a", "--recursive", "--archive"],
        "rsync" => &["-r", "-a", "--recursive", "--archive"],
        "scp" => &["-r"],
        _ => &[],
    };
    command.flags.iter().any(|flag| whole.contains(&flag.as_str()))
}

/// What a copy, move or link writes: its destination (`effects::
/// sources_and_destination`: `-t DIR` or the last operand; one appended
/// at run time is not known) and, as that may be a folder (`cp a.plist
/// ~/Library/LaunchAgents/`), each source under its own name in it; for
/// a copy of whole folders, every entry of the destination.
fn copied_to(command: &Command) -> Vec<String> {
    let copied = sources_and_destination(command);
    let (sources, mut written) = (copied.sources, copied.landed);
    let [destination] = written.as_slice() else { return written };
    if copied.exact || destination == RUN_TIME_VALUE {
        return written;
    }
    let folder = destination.clone();
    if copies_trees(command) {
        written.push(entries_of(&folder));
    }
    written.extend(sources.iter().filter_map(|source| {
        let name = source.rsplit('/').next()?;
        (!name.is_empty() && name != "." && name != "..")
            .then(|| normalize_path(&format!("{folder}/{name}")))
    }));
    written
}
