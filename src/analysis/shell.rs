//! The walk over a tree-sitter-bash syntax tree: every command that will
//! run (in lists, pipelines, subshells, substitutions, control flow, and
//! function bodies where the function is called), assignments that later words use, redirections and
//! their targets, here-documents and here-strings fed to a command, and
//! which stages of a pipeline feed which.
//!
//! tree-sitter-bash is error-tolerant: input that is not valid shell still
//! yields a tree, whose readable parts are walked like any other; the
//! action gets `Fact::Unparseable` (set by the caller).

use tree_sitter::Node;

use super::{Builder, Command, Fact, Subshell, budget, executors, words};

/// Walks `node`; returns the commands it runs directly, in order.
pub(super) fn walk(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
) -> Vec<usize> {
    let mut direct = Vec::new();
    visit(builder, node, source, via, &mut direct);
    direct
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    source.get(node.byte_range()).unwrap_or("")
}

fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn visit(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
    direct: &mut Vec<usize>,
) {
    // Agent text can nest thousands deep: each level is paid for, and the
    // walk does not go deeper than the budget allows (the action is then
    // too complex, which needs a human).
    let Some(_level) = budget::nest().filter(|_| budget::work(1)) else { return };
    match node.kind() {
        "comment" | "heredoc_body" | "heredoc_start" | "heredoc_end" => {}
        "command" => direct.extend(command(builder, node, source, via)),
        "variable_assignment" => {
            assign(builder, node, source, via);
            direct.extend(declaration(builder, "export", &[node], source, via));
        }
        "declaration_command" | "unset_command" => {
            let keyword =
                text(node, source).split_whitespace().next().unwrap_or("export").to_owned();
            let children = named_children(node);
            // `declare -n REF=NAME` (`local -n`, `typeset -n`): REF stands
            // for whatever NAME holds whenever REF is used, which is not
            // followed, so REF is unknown.
            let name_reference = keyword != "export"
                && children.iter().any(|child| {
                    let word = text(*child, source);
                    child.kind() == "word"
                        && word.starts_with('-')
                        && !word.starts_with("--")
                        && word.contains('n')
                });
            let referring = |builder: &mut Builder, name: Option<Node<'_>>| {
                if let Some(name) = name.filter(|_| name_reference) {
                    builder.vars.refer(text(name, source));
                }
            };
            for child in &children {
                match child.kind() {
                    "variable_assignment" => {
                        assign(builder, *child, source, via);
                        referring(builder, child.child_by_field_name("name"));
                    }
                    "variable_name" => referring(builder, Some(*child)),
                    _ => {
                        substitutions(builder, *child, source, via);
                    }
                }
            }
            // What an exported variable makes later commands run
            // (`export GIT_SSH_COMMAND=…`) is judged where it is set.
            if keyword == "export" {
                let exported: Vec<(String, String)> = declared(&children, source, &builder.vars)
                    .into_iter()
                    .filter_map(|word| {
                        word.split_once('=').map(|(n, v)| (n.to_owned(), v.to_owned()))
                    })
                    .collect();
                executors::environment(builder, &exported, &[]);
            }
            direct.extend(declaration(builder, &keyword, &children, source, via));
        }
        "pipeline" => pipeline(builder, node, source, via, direct),
        // `( cd ~/.ssh ); rm id_rsa`: what the subshell changes ends
        // with it.
        "subshell" => builder.in_subshell(Subshell::Copy, |builder| {
            for child in named_children(node) {
                visit(builder, child, source, via, direct);
            }
        }),
        "list" => {
            // `a && b || c …` nests to the left, one level per operator:
            // walked as the flat sequence it runs, so a long chain costs
            // no depth. Every member after the first may not run.
            for (at, child) in list_members(node).into_iter().enumerate() {
                let branch = usize::from(at > 0);
                builder.conditional += branch;
                visit(builder, child, source, via, direct);
                builder.conditional -= branch;
            }
        }
        "for_statement" if for_each_value(builder, node, source, via, direct) => {}
        "for_statement"
        | "c_style_for_statement"
        | "while_statement"
        | "if_statement"
        | "case_statement" => {
            builder.conditional += 1;
            // The loop's words are expanded once, before it runs: its
            // variable holds what their substitutions print.
            let mut cursor = node.walk();
            let values: Vec<Node<'_>> = node.children_by_field_name("value", &mut cursor).collect();
            if let Some(variable) = node.child_by_field_name("variable") {
                let mut printed = Vec::new();
                for value in &values {
                    printed.extend(substitutions(builder, *value, source, via));
                    printed.extend(builder.vars.outputs_expanded_in(*value, source));
                }
                builder.vars().set(text(variable, source), None);
                builder.hold_output_of(text(variable, source), &printed);
            }
            // A loop's second round sees what its first assigned.
            let rounds = if node.kind() != "if_statement"
                && node.kind() != "case_statement"
                && text(node, source).contains('=')
            {
                2
            } else {
                1
            };
            for _ in 0..rounds {
                for child in named_children(node).into_iter().filter(|c| !values.contains(c)) {
                    visit(builder, child, source, via, direct);
                }
            }
            builder.conditional -= 1;
        }
        "redirected_statement" => redirected(builder, node, source, via, direct),
        "function_definition" => {
            fork_bomb(builder, node, source);
            if let (Some(name), Some(body)) =
                (node.child_by_field_name("name"), node.child_by_field_name("body"))
            {
                builder.define_function(text(name, source), text(body, source), via);
            }
        }
        "ERROR" if text(node, source).trim_start().starts_with('{') => {
            direct.extend(brace_command(builder, node, source, via))
        }
        "ERROR" if named_children(node).first().is_some_and(|c| c.kind() == "command_name") => {
            direct.extend(command(builder, node, source, via));
        }
        _ => {
            for child in named_children(node) {
                visit(builder, child, source, via, direct);
            }
        }
    }
}

/// Commands inside substitutions anywhere under `node` (they run before
/// the word they sit in is known); returns their direct commands.
fn substitutions(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
) -> Vec<usize> {
    let mut found = Vec::new();
    let Some(_level) = budget::nest().filter(|_| budget::work(1)) else { return found };
    if matches!(node.kind(), "command_substitution" | "process_substitution") {
        builder.in_subshell(Subshell::Copy, |builder| {
            for child in named_children(node) {
                visit(builder, child, source, via, &mut found);
            }
        });
        return found;
    }
    for child in named_children(node) {
        found.extend(substitutions(builder, child, source, via));
    }
    found
}

/// The commands of a left-nested `list`, in the order they run.
fn list_members(node: Node<'_>) -> Vec<Node<'_>> {
    let mut members = Vec::new();
    let mut current = node;
    loop {
        let mut children = named_children(current);
        let nested = children.first().is_some_and(|first| first.kind() == "list");
        members.extend(children.drain(usize::from(nested)..).rev());
        match children.first() {
            Some(&first) if nested => current = first,
            _ => break,
        }
    }
    members.reverse();
    members
}

fn assign(builder: &mut Builder, node: Node<'_>, source: &str, via: Option<&str>) {
    let name = node.child_by_field_name("name").map(|n| text(n, source).to_owned());
    let value = node.child_by_field_name("value");
    let mut printed = Vec::new();
    if let Some(value) = value {
        printed = substitutions(builder, value, source, via);
        printed.extend(builder.vars.outputs_expanded_in(value, source));
    }
    let Some(name) = name else { return };
    builder.hold_output_of(&name, &printed);
    let expanded = value.map(|v| words::expand(v, source, &builder.vars));
    let known = match expanded {
        None => Some(String::new()),
        Some(e) if !e.dynamic => Some(e.joined()),
        Some(_) => None,
    };
    builder.assign(&name, known);
}

/// Records a command; returns it and the commands it runs in turn
/// (`sudo bash` is both), outermost first.
/// An assignment or declaration as a command (`export NAME=value`,
/// `unset NAME`), so rules can name variables that change behaviour.
fn declaration(
    builder: &mut Builder,
    keyword: &str,
    parts: &[Node<'_>],
    source: &str,
    via: Option<&str>,
) -> Option<usize> {
    let mut argv = vec![keyword.to_owned()];
    argv.extend(declared(parts, source, &builder.vars));
    builder.command(Command::new(argv, false, false, via.map(str::to_owned)))
}

/// The words a declaration declares: `NAME=value` (the value expanded),
/// `NAME=` or `NAME`.
fn declared(parts: &[Node<'_>], source: &str, vars: &words::Vars) -> Vec<String> {
    parts
        .iter()
        .map(|part| {
            let name = part
                .child_by_field_name("name")
                .map_or_else(|| text(*part, source).to_owned(), |n| text(n, source).to_owned());
            let value =
                part.child_by_field_name("value").map(|v| words::expand(v, source, vars).joined());
            match value {
                Some(value) => format!("{name}={value}"),
                None if part.kind() == "variable_assignment" => format!("{name}="),
                None => name,
            }
        })
        .collect()
}

fn command(builder: &mut Builder, node: Node<'_>, source: &str, via: Option<&str>) -> Vec<usize> {
    command_with(builder, node, &[], &[], source, via)
}

/// A command whose words include `trailing`: arguments written after a
/// redirection, which the grammar reads as more of its targets; and
/// `lost`, words the grammar left out before a here-document operator.
fn command_with(
    builder: &mut Builder,
    node: Node<'_>,
    trailing: &[Node<'_>],
    lost: &[String],
    source: &str,
    via: Option<&str>,
) -> Vec<usize> {
    // `server__tool {json}` written inside a script is a tool call.
    let raw = text(node, source);
    if raw
        .split_once(' ')
        .is_some_and(|(name, rest)| name.contains("__") && rest.trim_start().starts_with('{'))
    {
        let start = builder.analysis.commands.len();
        if super::tool_call::analyze(builder, raw) {
            return (start..builder.analysis.commands.len()).collect();
        }
    }
    let vars = builder.vars.clone();
    let mut argv: Vec<String> = Vec::new();
    let (mut dynamic_program, mut dynamic_args) = (false, false);
    let mut open_at = None;
    let mut substituted = Vec::new();
    // What substitutions print into a here-string, the command's input.
    let mut on_stdin = Vec::new();
    // The commands of each process substitution given as a word, a file.
    let mut process_files: Vec<Vec<usize>> = Vec::new();
    // What the assignments before the program print: in its environment,
    // not among its words.
    let mut in_environment = Vec::new();
    let mut env: Vec<(String, String)> = Vec::new();
    // The same assignments as values the walk knows or not, for a builtin
    // that runs text in this shell with them in force (`IFS=, eval …`).
    let mut in_force: Vec<(String, Option<String>)> = Vec::new();
    let mut here_text = None;
    let mut named_seen = false;
    // The words after a redirection's target, in place (`>x y cmd` runs `y`).
    let in_order = named_children(node).into_iter().flat_map(|child| {
        let after =
            if child.kind() == "file_redirect" { words_after_target(child) } else { Vec::new() };
        std::iter::once(child).chain(after)
    });
    for child in in_order.chain(trailing.iter().copied()) {
        match child.kind() {
            "variable_assignment" if !named_seen => {
                in_environment.extend(substitutions(builder, child, source, via));
                let name = child
                    .child_by_field_name("name")
                    .map(|n| text(n, source).to_owned())
                    .unwrap_or_default();
                let expanded =
                    child.child_by_field_name("value").map(|v| words::expand(v, source, &vars));
                let value = expanded.as_ref().map(words::Expanded::joined).unwrap_or_default();
                let known = !expanded.as_ref().is_some_and(|expanded| expanded.dynamic);
                in_force.push((name.clone(), known.then(|| value.clone())));
                env.push((name, value));
            }
            "herestring_redirect" => {
                let given = [
                    substitutions(builder, child, source, via),
                    vars.outputs_expanded_in(child, source),
                ]
                .concat();
                substituted.extend(&given);
                on_stdin.extend(given);
                here_text = named_children(child)
                    .first()
                    .map(|body| words::expand(*body, source, &vars).joined());
            }
            "file_redirect" => redirect(builder, child, source, via, &vars),
            "comment" => {}
            "command_name" if is_descriptor(child, source) => {}
            _ => {
                let found = substitutions(builder, child, source, via);
                if child.kind() == "process_substitution" {
                    process_files.push(found.clone());
                }
                substituted.extend(found);
                substituted.extend(vars.outputs_expanded_in(child, source));
                let expanded = words::expand(child, source, &vars);
                if !named_seen || argv.is_empty() {
                    dynamic_program |=
                        expanded.dynamic || expanded.globbed || expanded.words.is_empty();
                    named_seen = true;
                } else {
                    dynamic_args |= expanded.dynamic;
                    // Where an unquoted unknown value may split into
                    // other words.
                    if expanded.open && open_at.is_none() {
                        open_at = Some(argv.len());
                    }
                }
                argv.extend(expanded.words);
            }
        }
    }
    if !argv.is_empty() {
        argv.extend(lost.iter().cloned());
    }
    executors::environment(builder, &env, &argv);
    for (name, value) in &env {
        builder.command(Command::new(
            vec!["export".into(), format!("{name}={value}")],
            false,
            false,
            Some("assignment".into()),
        ));
    }
    if argv.is_empty() {
        return Vec::new();
    }
    // `eval "$(brew shellenv)"`: what it runs is the tool's own setup.
    if !dynamic_program
        && argv.first().is_some_and(|program| program == "eval")
        && argv.iter().skip(1).all(|word| word == words::RUN_TIME_VALUE)
        && !substituted.is_empty()
        && substituted.iter().all(|&at| executors::prints_shell_setup(builder.get(at)))
    {
        argv.truncate(1);
        dynamic_args = false;
    }
    let evaluates = !dynamic_program
        && argv.first().is_some_and(|program| executors::EVALUATORS.contains(&program.as_str()));
    let outer = (evaluates && !in_force.is_empty()).then(|| {
        let outer = builder.vars.clone();
        for (name, value) in in_force {
            builder.vars().set(&name, value);
        }
        outer
    });
    builder.time_is_a_program =
        !env.is_empty() && argv.first().is_some_and(|program| program == "time");
    if let Some(at) = open_at.filter(|_| !dynamic_program) {
        super::possible::note_open(builder, &argv, at);
    }
    let recorded =
        builder.command(Command::new(argv, dynamic_program, dynamic_args, via.map(str::to_owned)));
    if let Some(outer) = outer {
        builder.vars = outer;
    }
    let Some(index) = recorded else {
        return Vec::new();
    };
    // `coproc` is a reserved word only where written so, unquoted, in
    // command position (`command coproc x` runs a program named coproc).
    if named_children(node)
        .first()
        .is_some_and(|name| name.kind() == "command_name" && text(*name, source) == "coproc")
    {
        executors::coproc(builder, index);
    }
    let group: Vec<usize> = (index..builder.analysis.commands.len()).collect();
    for &at in &group {
        let set = variables_set_by(builder.get(at));
        set.apply(builder);
    }
    let innermost = *group.last().unwrap_or(&index);
    let mut substituted = builder.and_whose_output_they_print(substituted);
    let printed = if group.iter().any(|&at| builder.get(at).prints_its_words()) {
        &substituted
    } else {
        &on_stdin
    };
    builder.prints_output_of(index, printed.clone());
    // What substitutions print becomes the command's words or
    // environment: run, if it executes them (text it runs may read the
    // environment); its words sent, if it sends them to another host.
    let executes = !(substituted.is_empty() && in_environment.is_empty())
        && group.iter().any(|&i| executors::executes_its_input(builder.get(i)));
    if executes {
        substituted.extend(in_environment);
        executors::decoded_into(builder, &substituted, &group);
    }
    if executes
        || !substituted.is_empty()
            && group.iter().any(|&i| executors::sends_to_a_host(builder.get(i)))
    {
        builder.feed(vec![substituted, group.clone()]);
    }
    executors::script_given_as_a_file(builder, &group, &process_files);
    if let Some(text) = here_text {
        executors::stdin_text(builder, innermost, &text);
    }
    group
}

/// What running a command does to the shell's variables.
enum VariablesSet {
    /// These become known only when it runs.
    Unknown(Vec<String>),
    /// Any variable may change (`eval`, `source`, a `trap` or an `alias`
    /// that runs later).
    Any,
}

impl VariablesSet {
    fn apply(self, builder: &mut Builder) {
        match self {
            Self::Unknown(names) => names.iter().for_each(|name| builder.vars().set(name, None)),
            Self::Any => builder.vars().forget_all(),
        }
    }
}

/// The variables `command` sets as it runs: `printf -v NAME`, `read
/// NAME`, `mapfile NAME`, `getopts SPEC NAME`, `cd` (`PWD`, `OLDPWD`), and
/// `$_`, the last argument of every command.
fn variables_set_by(command: &Command) -> VariablesSet {
    let argv = &command.argv;
    let identifier = |word: &&String| {
        !word.is_empty()
            && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !word.starts_with(|c: char| c.is_ascii_digit())
    };
    let mut names: Vec<String> = vec!["_".to_owned()];
    match command.program.as_str() {
        "printf" => names.extend(argv.windows(2).filter_map(|w| match w {
            [flag, name] if flag == "-v" => Some(name.clone()),
            _ => None,
        })),
        "read" | "mapfile" | "readarray" => {
            names.extend(argv.iter().skip(1).filter(identifier).cloned())
        }
        "getopts" => names.extend(argv.get(2).cloned()),
        "cd" | "pushd" | "popd" => names.extend(["PWD".to_owned(), "OLDPWD".to_owned()]),
        // `shift` and `set -- …` (or `set WORD`) renumber the positional
        // parameters a `-c` text was given.
        "shift" | "set"
            if command.program == "shift"
                || argv.iter().skip(1).any(|w| w == "--" || !w.starts_with(['-', '+'])) =>
        {
            names.extend((1..super::POSITIONALS_KNOWN).map(|n| n.to_string()))
        }
        "eval" | "source" | "." | "trap" | "alias" if argv.len() > 1 => return VariablesSet::Any,
        _ => {}
    }
    VariablesSet::Unknown(names)
}

/// `{rm,-rf,~}` in command position, which the grammar cannot read: the
/// same text is expanded as an argument would be, and its words are the
/// command.
fn brace_command(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
) -> Option<usize> {
    let wrapped = format!(": {}", text(node, source).trim());
    let tree = super::parse_bash(&wrapped)?;
    let command = named_children(tree.root_node()).into_iter().find(|n| n.kind() == "command")?;
    let vars = builder.vars.clone();
    let mut argv = Vec::new();
    let mut dynamic = false;
    for argument in named_children(command).into_iter().skip(1) {
        let expanded = words::expand(argument, &wrapped, &vars);
        dynamic |= expanded.dynamic;
        argv.extend(expanded.words);
    }
    if argv.is_empty() {
        return None;
    }
    builder.command(Command::new(argv, false, dynamic, via.map(str::to_owned)))
}

/// The words a redirection is followed by besides its target: in bash,
/// `git 2>/dev/null reset --hard` runs `git reset --hard`, while the
/// grammar lists `reset` and `--hard` as more destinations.
fn words_after_target(redirection: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = redirection.walk();
    match redirection.kind() {
        // `rm <<EOF -rf ~`: the grammar gives the here-document the words
        // after its delimiter; bash gives them to the command.
        "heredoc_redirect" => redirection.children_by_field_name("argument", &mut cursor).collect(),
        _ => redirection.children_by_field_name("destination", &mut cursor).skip(1).collect(),
    }
}

/// Plain words between a command and its here-document operator that
/// tree-sitter-bash leaves out of the tree: a lone `-` (`curl -K -
/// <<EOF`, `curl -K -<<EOF`), which bash gives the command.
fn lost_before_heredoc(statement: Node<'_>, body: Node<'_>, source: &str) -> Vec<String> {
    let Some(heredoc) =
        named_children(statement).into_iter().find(|c| c.kind() == "heredoc_redirect")
    else {
        return Vec::new();
    };
    let gap = source.get(body.end_byte()..heredoc.start_byte()).unwrap_or_default();
    let operator = text(heredoc, source);
    let glued = operator.find("<<").and_then(|at| operator.get(..at)).unwrap_or_default();
    let before = format!("{gap}{glued}");
    let mut words: Vec<String> = before.split_whitespace().map(str::to_owned).collect();
    // A number glued to the operator is its file descriptor (`cat 0<<EOF`).
    if !before.ends_with(char::is_whitespace)
        && words.last().is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
    {
        words.pop();
    }
    // Only words that need no expansion are taken as written.
    if words.iter().all(|w| w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=@:+,".contains(c)))
    {
        words
    } else {
        Vec::new()
    }
}

/// `0<<EOF rm -rf ~`: a number glued to a redirection operator is its file
/// descriptor, which the grammar reads as the command's name.
fn is_descriptor(name: Node<'_>, source: &str) -> bool {
    name.named_child(0).is_some_and(|only| only.kind() == "number")
        && source.as_bytes().get(name.end_byte()).is_some_and(|next| matches!(next, b'<' | b'>'))
}

fn redirect(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
    vars: &words::Vars,
) {
    redirect_from(builder, node, source, via, vars, &[]);
}

/// Records a redirection; a written target is tied to `from`, the
/// commands whose output goes there.
fn redirect_from(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
    vars: &words::Vars,
    from: &[usize],
) {
    let operator: String = {
        let mut cursor = node.walk();
        node.children(&mut cursor).filter(|c| !c.is_named()).map(|c| text(c, source)).collect()
    };
    let Some(destination) = node.child_by_field_name("destination") else { return };
    if matches!(destination.kind(), "process_substitution") {
        substitutions(builder, destination, source, via);
        return;
    }
    let target = words::expand(destination, source, vars).joined();
    if operator.contains('&') && target.chars().all(|c| c.is_ascii_digit() || c == '-')
        || target == "/dev/null"
    {
        return;
    }
    if operator.contains('>') {
        builder.write_from(from, &target, operator.contains(">>"));
    } else {
        builder.read(&target);
    }
}

fn redirected(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
    direct: &mut Vec<usize>,
) {
    let mut body_direct = Vec::new();
    let trailing: Vec<Node<'_>> = named_children(node)
        .into_iter()
        .filter(|child| matches!(child.kind(), "file_redirect" | "heredoc_redirect"))
        .flat_map(words_after_target)
        .collect();
    if let Some(body) = node.child_by_field_name("body") {
        // Only a simple command takes them (a list's last command would:
        // `cd x && python3 - <<EOF` keeps the one walk a list gets).
        let lost = if body.kind() == "command" {
            lost_before_heredoc(node, body, source)
        } else {
            Vec::new()
        };
        match (body.kind(), trailing.is_empty() && lost.is_empty()) {
            (_, true) => visit(builder, body, source, via, &mut body_direct),
            ("command", false) => {
                body_direct.extend(command_with(builder, body, &trailing, &lost, source, via))
            }
            // Bash refuses words after a compound command's redirection.
            (_, false) => {
                builder.fact(Fact::Unparseable, "words after a redirection of a compound command");
                visit(builder, body, source, via, &mut body_direct);
            }
        }
    }
    let vars = builder.vars.clone();
    // Text fed in first, so a file written with it knows its content
    // (`cat > f <<EOF`).
    let mut children = named_children(node);
    children.sort_by_key(|child| child.kind() == "file_redirect");
    for child in children {
        match child.kind() {
            "file_redirect" => redirect_from(builder, child, source, via, &vars, &body_direct),
            "heredoc_redirect" => {
                let body = named_children(child).into_iter().find(|c| c.kind() == "heredoc_body");
                // `cat <<EOF > f` parses with `> f` inside the here-document
                // operator: it redirects the receiver, written once the
                // body is fed in. Into a process (`> >(bash)`), the body is
                // what that process reads, as in a pipeline.
                let into_file = |redirect: &Node<'_>| {
                    redirect.kind() == "file_redirect"
                        && redirect
                            .child_by_field_name("destination")
                            .is_some_and(|d| d.kind() != "process_substitution")
                };
                let (redirects, nested): (Vec<Node<'_>>, Vec<Node<'_>>) = named_children(child)
                    .into_iter()
                    .filter(|c| c.kind() != "heredoc_body")
                    .partition(into_file);
                for nested in nested {
                    visit(builder, nested, source, via, &mut body_direct);
                }
                // An unquoted delimiter (`<<EOF`, not `<<'EOF'`) expands its
                // body: its substitutions run before the receiver does.
                let start = named_children(child)
                    .into_iter()
                    .find(|c| c.kind() == "heredoc_start")
                    .map(|c| text(c, source))
                    .unwrap_or("");
                if let Some(body) = body.filter(|_| !start.contains(['\'', '"', '\\'])) {
                    substitutions(builder, body, source, via);
                    // The grammar leaves `` `…` `` in a body as text.
                    for script in backquoted(text(body, source)) {
                        builder.shell(&script, via);
                    }
                }
                if let (Some(body), Some(&receiver)) = (body, body_direct.last()) {
                    executors::stdin_text(builder, receiver, text(body, source));
                }
                for redirect in redirects {
                    redirect_from(builder, redirect, source, via, &vars, &body_direct);
                }
            }
            "herestring_redirect" => {
                substitutions(builder, child, source, via);
                let here = named_children(child)
                    .first()
                    .map(|b| words::expand(*b, source, &vars).joined());
                if let (Some(here), Some(&receiver)) = (here, body_direct.last()) {
                    executors::stdin_text(builder, receiver, &here);
                }
            }
            _ => {}
        }
    }
    direct.extend(body_direct);
}

/// `for NAME in WORDS; do BODY; done` over words known statically (a
/// glob stands for the names it matches): BODY is walked once per word
/// with NAME holding it (`for d in ~ /; do rm -rf "$d"; done`), as bash
/// runs it. Declined (the caller reads NAME as unknown) for words not
/// known, more than [`LOOP_VALUES_KNOWN`] of them, or a loop inside one
/// being walked this way, whose rounds would multiply.
fn for_each_value(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
    direct: &mut Vec<usize>,
) -> bool {
    let (Some(variable), Some(body)) =
        (node.child_by_field_name("variable"), node.child_by_field_name("body"))
    else {
        return false;
    };
    if builder.unrolling {
        return false;
    }
    // `for x; do` runs over the positional parameters; `for x in; do` never.
    if node.child_by_field_name("value").is_none() {
        return false;
    }
    let mut cursor = node.walk();
    let mut values = Vec::new();
    for word in node.children_by_field_name("value", &mut cursor) {
        let expanded = words::expand(word, source, &builder.vars);
        if expanded.dynamic || values.len() + expanded.words.len() > LOOP_VALUES_KNOWN {
            return false;
        }
        values.extend(expanded.words);
    }
    let name = text(variable, source);
    builder.conditional += 1;
    builder.unrolling = true;
    for value in values {
        builder.vars().set(name, Some(value));
        visit(builder, body, source, via, direct);
    }
    builder.unrolling = false;
    builder.conditional -= 1;
    true
}

/// The most words a `for` loop is walked once for each.
const LOOP_VALUES_KNOWN: usize = 16;

fn pipeline(
    builder: &mut Builder,
    node: Node<'_>,
    source: &str,
    via: Option<&str>,
    direct: &mut Vec<usize>,
) {
    let mut stages: Vec<Vec<usize>> = Vec::new();
    let children = named_children(node);
    let last = children.len().saturating_sub(1);
    for (at, child) in children.into_iter().enumerate() {
        let mut stage = Vec::new();
        // Bash runs every stage in a subshell; zsh (a harness may run
        // the user's shell) runs the last in the shell itself, so what
        // the last changes is taken as in force after it.
        // The first command a later stage records may be the one that
        // reads the pipe (`… | xargs rm`): `xargs` waits for the text.
        builder.stdin_piped = at > 0;
        if at < last {
            builder.in_subshell(Subshell::Copy, |builder| {
                visit(builder, child, source, via, &mut stage)
            });
        } else {
            visit(builder, child, source, via, &mut stage);
        }
        builder.stdin_piped = false;
        if !stage.is_empty() {
            stages.push(stage);
        }
    }
    executors::pipeline_text(builder, &stages);
    direct.extend(stages.iter().flatten().copied());
    // A stage printing what other commands printed (`echo "$X" | curl
    // -d @- …` with `X=$(env)`) continues their chain.
    for (at, stage) in stages.iter().enumerate() {
        let printed = builder.printed_by(stage);
        if !printed.is_empty() {
            let rest = stages.iter().skip(at).cloned();
            builder.feed(std::iter::once(printed).chain(rest).collect());
        }
    }
    builder.feed(stages);
}

/// A function that calls itself more than once, or in the background or a
/// pipeline: `:(){ :|:& };:`.
fn fork_bomb(builder: &mut Builder, node: Node<'_>, source: &str) {
    let Some(name) = node.child_by_field_name("name").map(|n| text(n, source)) else { return };
    let Some(body) = node.child_by_field_name("body") else { return };
    let body_text = text(body, source);
    let calls = body_text
        .split(|c: char| c.is_whitespace() || matches!(c, '|' | '&' | ';' | '{' | '}' | '(' | ')'))
        .filter(|w| *w == name)
        .count();
    if calls >= 2 || calls == 1 && (body_text.contains('&') || body_text.contains('|')) {
        builder.fact(Fact::ForkBomb, format!("function {name} starts copies of itself"));
    }
}

/// `cat <<EOF; echo done` with the here-document's body on the lines
/// that follow: bash reads the body after the whole line, and runs what
/// follows `;` after `cat`; tree-sitter-bash refuses the `;` there, and
/// so it does a `)` closing a subshell the operator is in (`(cat
/// <<EOF)`). The same script with each such rest moved to its own line
/// after the bodies, which bash runs the same way; `None` when no line
/// has one. Each move takes a `;` or a `)` out of the line, so this ends.
pub(super) fn with_rests_after_heredocs(script: &str) -> Option<String> {
    let mut lines: Vec<String> = script.split('\n').map(str::to_owned).collect();
    let mut at = 0;
    let mut moved = false;
    while let Some(line) = lines.get(at).cloned() {
        at += 1;
        let Some((head, rest)) = split_after_heredoc(&line) else { continue };
        let delimiters = heredoc_delimiters(&head);
        if let Some(slot) = lines.get_mut(at - 1) {
            *slot = head;
        }
        for (delimiter, strips_tabs) in delimiters {
            while let Some(body) = lines.get(at) {
                at += 1;
                let end = if strips_tabs { body.trim_start_matches('\t') } else { body.as_str() };
                if end == delimiter {
                    break;
                }
            }
        }
        lines.insert(at.min(lines.len()), rest);
        moved = true;
    }
    moved.then(|| lines.join("\n"))
}

/// A line holding a here-document operator, split at the first `;` after
/// it outside quotes (the rest is what follows it), or at a `)` closing
/// a parenthesis opened before it (the rest starts with the `)`).
fn split_after_heredoc(line: &str) -> Option<(String, String)> {
    let mut quote = None;
    let mut escaped = false;
    let mut heredoc_seen = false;
    let mut opened_after = 0_usize;
    let bytes = line.as_bytes();
    for (at, &byte) in bytes.iter().enumerate() {
        match (quote, byte) {
            _ if escaped => escaped = false,
            (Some(b'\''), b'\'') => quote = None,
            (Some(b'\''), _) => {}
            (_, b'\\') => escaped = true,
            (Some(open), b) if b == open => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(byte),
            (None, b'#') if at == 0 || bytes.get(at - 1).is_some_and(u8::is_ascii_whitespace) => {
                return None;
            }
            (None, b'<')
                if bytes.get(at + 1) == Some(&b'<')
                    && bytes.get(at + 2) != Some(&b'<')
                    && (at == 0 || bytes.get(at - 1) != Some(&b'<')) =>
            {
                heredoc_seen = true;
            }
            (None, b';') if heredoc_seen && bytes.get(at + 1) != Some(&b';') => {
                let rest = line.get(at + 1..)?.trim();
                return (!rest.is_empty())
                    .then(|| (line.get(..at).unwrap_or_default().to_owned(), rest.to_owned()));
            }
            (None, b'(') if heredoc_seen => opened_after += 1,
            (None, b')') if heredoc_seen => match opened_after.checked_sub(1) {
                Some(still_open) => opened_after = still_open,
                None => {
                    let rest = line.get(at..)?.trim();
                    return Some((line.get(..at).unwrap_or_default().to_owned(), rest.to_owned()));
                }
            },
            _ => {}
        }
    }
    None
}

/// The texts between unescaped backquotes, which bash runs as command
/// substitutions in an unquoted here-document's body.
fn backquoted(body: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut open: Option<String> = None;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match (c, open.as_mut()) {
            ('\\', Some(script)) => script.extend(chars.next()),
            ('\\', None) => {
                chars.next();
            }
            ('`', Some(_)) => found.extend(open.take()),
            ('`', None) => open = Some(String::new()),
            (c, Some(script)) => script.push(c),
            (_, None) => {}
        }
    }
    found
}

/// The delimiters of the here-documents a line opens, in order, quotes
/// removed, and whether each is `<<-` (its end line may be indented with
/// tabs).
pub(super) fn heredoc_delimiters(line: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("<<") {
        let after = rest.get(at + 2..).unwrap_or_default();
        if after.starts_with('<') {
            rest = after.trim_start_matches('<');
            continue;
        }
        let (strips_tabs, after) = match after.strip_prefix('-') {
            Some(stripped) => (true, stripped),
            None => (false, after),
        };
        let after = after.trim_start();
        let end = after.find(|c: char| c.is_whitespace() || ";|&<>()".contains(c));
        let word = after.get(..end.unwrap_or(after.len())).unwrap_or_default();
        found.push((word.replace(['\'', '"', '\\'], ""), strips_tabs));
        rest = after.get(word.len()..).unwrap_or_default();
    }
    found
}
