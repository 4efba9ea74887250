//! The reader of code on a real parser: each language's tree-sitter tree
//! is seen through that language's [`Shape`]s (a call, a binding, an
//! import, a string with its interpolated parts…), and one walk over
//! those shapes finds the calls the language's table (`apis`) names:
//! deletions, writes, truncations, programs started and code evaluated.
//!
//! Names are resolved as the code binds them: imports and their aliases
//! (`from shutil import rmtree as wipe`, `const {rmSync: r} =
//! require('node:fs')`), star imports, and assignments of a function or
//! module to a name. Inside a function, lambda, method or block its
//! parameters (defaults, rest and keyword parameters, destructured
//! names) and what its body binds hide the same names outside
//! ([`Shape::Scope`]): a parameter's value is its caller's, unknown
//! here, and calling it calls no API; what the body binds is also a
//! value the name may hold outside (a function may bind a global).
//! Strings are folded where they are constant: literal concatenation,
//! f-strings and template literals over known names, names assigned a
//! constant, path joins, base64 decoded by the language's decoders,
//! home-directory idioms (`~`, as `home` tells where it is home). A
//! name bound twice keeps whatever may be a function (it may be the
//! dangerous one), and two different strings become unknown. What cannot
//! be folded is [`super::UNKNOWN`], so a dangerous call on it needs a
//! human. Strings that are only data are never run.
//!
//! The walk holds a [`budget::nest`] level per node it enters and pays
//! [`budget::work`] per node, and folding pays [`budget::produce`] for
//! the text it builds.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::{UNKNOWN, apis, home, text::looks_like_path};

/// The text of a node.
pub(super) fn text_of<'c>(node: Node<'_>, code: &'c str) -> &'c str {
    code.get(node.byte_range()).unwrap_or_default()
}

/// The text of a plain string's `kind` children (a module name, a key).
pub(super) fn fragments(node: Node<'_>, code: &str, kind: &str) -> String {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|child| child.kind() == kind)
        .map(|child| text_of(child, code))
        .collect()
}

/// A string literal's text with its backslash escapes undone.
pub(super) fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

use crate::analysis::{Builder, Change, Command, Fact, FileWrite, budget};

/// A language read on its grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    Python,
    JavaScript,
    Ruby,
    Php,
}

impl Dialect {
    /// The dialect of an interpreter family or a file's language.
    pub(super) fn of(family: &str) -> Option<Self> {
        match family {
            "python" | "pypy" => Some(Self::Python),
            "node" | "nodejs" | "bun" | "deno" | "javascript" => Some(Self::JavaScript),
            "ruby" => Some(Self::Ruby),
            "php" => Some(Self::Php),
            _ => None,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Python => "python",
            Self::JavaScript => "node",
            Self::Ruby => "ruby",
            Self::Php => "php",
        }
    }

    /// The qualified name of a global function or class.
    fn global(self, name: &str) -> String {
        match self {
            Self::Ruby if name.starts_with(|c: char| c.is_lowercase()) => format!("Kernel.{name}"),
            Self::Php if !name.starts_with('$') => format!("php.{name}"),
            _ => name.to_owned(),
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Self::Python => tree_sitter_python::LANGUAGE.into(),
            Self::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Self::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Self::Php => tree_sitter_php::LANGUAGE_PHP_ONLY.into(),
        }
    }

    fn shape<'t>(self, node: Node<'t>, code: &str) -> Shape<'t> {
        match self {
            Self::Python => super::python::shape(node, code),
            Self::JavaScript => super::javascript::shape(node, code),
            Self::Ruby => super::ruby::shape(node, code),
            Self::Php => super::php::shape(node, code),
        }
    }
}

/// What a node means to the reader, whatever its language.
pub(super) enum Shape<'t> {
    /// A call of what `callee` names with `args`.
    Call {
        callee: Callee<'t>,
        args: Vec<Arg<'t>>,
    },
    /// Text run by a shell (backticks, `%x()`): its pieces.
    Shell(Vec<Piece<'t>>),
    /// `name = value`, or `{key: name} = value` (`Some(key)`: the name is
    /// bound to the value's `key`).
    Bind {
        names: Vec<(Option<String>, String)>,
        value: Node<'t>,
    },
    /// Names bound to modules or their members: (name, qualified name).
    Import(Vec<(String, String)>),
    /// Every public name of a module is bound (`from os import *`).
    ImportAll(String),
    /// A string with its literal and interpolated pieces.
    Text(Vec<Piece<'t>>),
    /// Strings concatenated.
    Concat(Vec<Node<'t>>),
    /// Paths joined with `/` (`Path.home() / 'x'`).
    PathJoin(Node<'t>, Node<'t>),
    /// A name as the code wrote it.
    Name(String),
    /// A member of a value (`os.path`, `process.env.HOME`, `ENV['HOME']`).
    Member(Node<'t>, String),
    /// A list or an array.
    Items(Vec<Node<'t>>),
    /// The same value as the one node it wraps (parentheses, `await`).
    Same(Node<'t>),
    /// A function, lambda, method or block: inside it, `names` are its
    /// parameters, whose values come from its caller. `parameters` (the
    /// node declaring them, with their defaults) belongs to the enclosing
    /// scope: defaults are computed there.
    Scope {
        parameters: Option<Node<'t>>,
        names: Vec<String>,
    },
    Other,
}

/// The names a parameter list binds: every node of a kind in `binding`
/// (`identifier`, `variable_name`…) within `parameters`, except under a
/// field in `not_bound` (a default value, a type, a destructured key).
/// The walk is iterative and pays [`budget::work`] per node.
pub(super) fn parameter_names(
    parameters: Node<'_>,
    code: &str,
    binding: &[&str],
    not_bound: &[&str],
) -> Vec<String> {
    let mut names = Vec::new();
    let mut pending = vec![parameters];
    while let Some(node) = pending.pop() {
        if !budget::work(1) {
            break;
        }
        if binding.contains(&node.kind()) {
            names.push(text_of(node, code).to_owned());
            continue;
        }
        let mut cursor = node.walk();
        for (at, child) in node.named_children(&mut cursor).enumerate() {
            let field = u32::try_from(at).ok().and_then(|at| node.field_name_for_named_child(at));
            if !field.is_some_and(|field| not_bound.contains(&field)) {
                pending.push(child);
            }
        }
    }
    names
}

pub(super) enum Callee<'t> {
    /// An expression naming the function (`sh.rmtree`, `wipe`).
    Expr(Node<'t>),
    /// A method of a receiver (Ruby's `FileUtils.rm_rf`, `p.unlink`).
    Method(Node<'t>, String),
}

pub(super) struct Arg<'t> {
    pub(super) keyword: Option<String>,
    pub(super) value: Node<'t>,
}

/// How a grammar writes a keyword argument: the node's kind and the
/// fields of its name and value (Python's `keyword_argument` `name`,
/// Ruby's `pair` `key`).
pub(super) struct KeywordArgument {
    pub(super) kind: &'static str,
    pub(super) name: &'static str,
    pub(super) value: &'static str,
}

/// The arguments of a call's argument `list`: keyword arguments named (a
/// Ruby key's trailing `:` dropped), nodes of a kind in `passes_nothing`
/// (splats, comments, blocks) left out, every other node positional.
pub(super) fn arguments<'t>(
    list: Node<'t>,
    code: &str,
    keyword: &KeywordArgument,
    passes_nothing: &[&str],
) -> Vec<Arg<'t>> {
    let mut args = Vec::new();
    let mut cursor = list.walk();
    for arg in list.named_children(&mut cursor) {
        if arg.kind() == keyword.kind {
            if let (Some(name), Some(value)) =
                (arg.child_by_field_name(keyword.name), arg.child_by_field_name(keyword.value))
            {
                args.push(Arg {
                    keyword: Some(text_of(name, code).trim_end_matches(':').to_owned()),
                    value,
                });
            }
        } else if !passes_nothing.contains(&arg.kind()) {
            args.push(Arg { keyword: None, value: arg });
        }
    }
    args
}

pub(super) enum Piece<'t> {
    Literal(String),
    Expr(Node<'t>),
}

/// What an expression is worth before the code runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Value {
    /// Text, with [`UNKNOWN`] where a part is computed at run time.
    Text {
        text: String,
        known: bool,
    },
    /// A module, a class or a function, by its qualified name.
    Api(String),
    List(Vec<Value>),
    Unknown,
}

impl Value {
    pub(super) fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into(), known: true }
    }

    /// The value as text, with whether it is known; a `~` an expander
    /// made is still [`home::EXPANDED`] (see [`Value::as_path`]).
    pub(super) fn as_text(&self) -> (String, bool) {
        match self {
            Self::Text { text, known } => (text.clone(), *known),
            Self::List(items) => {
                let parts: Vec<(String, bool)> = items.iter().map(Value::as_text).collect();
                (
                    parts.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>().join(" "),
                    parts.iter().all(|(_, k)| *k),
                )
            }
            Self::Api(name) if apis::is_home(name) => (home::EXPANDED.into(), true),
            Self::Api(_) | Self::Unknown => (UNKNOWN.into(), false),
        }
    }

    /// The value as a path a file API is given ([`home::for_file_api`]).
    fn as_path(&self) -> (String, bool) {
        let (text, known) = self.as_text();
        (home::for_file_api(&text), known)
    }

    /// The value as text a shell or a program is given
    /// ([`home::for_shell`]).
    fn as_shell_text(&self) -> (String, bool) {
        let (text, known) = self.as_text();
        (home::for_shell(&text), known)
    }

    pub(super) fn concat(values: impl IntoIterator<Item = Value>) -> Value {
        let (mut text, mut known) = (String::new(), true);
        for value in values {
            let (part, part_known) = value.as_text();
            if !budget::produce(part.len()) {
                return Value::Unknown;
            }
            text.push_str(&part);
            known &= part_known;
        }
        Value::Text { text, known }
    }

    /// What a name bound twice may be: a function on either path (it may
    /// be the dangerous one), one string if both are the same.
    fn merge(self, other: Value) -> Value {
        match (self, other) {
            (same, again) if same == again => same,
            (Value::Api(first), Value::Api(second)) => {
                Value::Api(if apis::effect(&second).is_some() { second } else { first })
            }
            (api @ Value::Api(_), _) | (_, api @ Value::Api(_)) => api,
            _ => Value::Unknown,
        }
    }
}

/// Reads `code` in `dialect`; `false` when it does not parse cleanly (the
/// caller reads it lexically as well).
pub(super) fn read(builder: &mut Builder, dialect: Dialect, code: &str) -> bool {
    if !budget::work(code.len() + budget::PARSE_STEPS) {
        return true;
    }
    let Some(tree) = parse(dialect, code) else {
        return false;
    };
    let mut reader = Reader {
        builder,
        dialect,
        code,
        names: HashMap::new(),
        scopes: Vec::new(),
        file_arguments: HashSet::new(),
        inside_file_argument: 0,
        everything_of: Vec::new(),
        straight_line: !defines_code_that_runs_later(tree.root_node()),
    };
    reader.walk(tree.root_node());
    !tree.root_node().has_error()
}

fn parse(dialect: Dialect, code: &str) -> Option<tree_sitter::Tree> {
    let mut parser = tree_sitter::Parser::new();
    // Fails only if a grammar and the runtime disagree on their ABI.
    parser.set_language(&dialect.grammar()).ok()?;
    parser.parse(code, None)
}

/// Syntax whose body runs later, when it is called: a function, a
/// lambda, a method, a class, a Ruby block.
const RUNS_LATER: [&str; 14] = [
    "function_definition",
    "lambda",
    "class_definition",
    "function_declaration",
    "function_expression",
    "arrow_function",
    "method_definition",
    "class_declaration",
    "method",
    "singleton_method",
    "block",
    "do_block",
    "method_declaration",
    "anonymous_function",
];

/// Whether the program holds code that runs later than it is written
/// ([`RUNS_LATER`]): a call there may see a name bound after it.
fn defines_code_that_runs_later(root: Node<'_>) -> bool {
    let mut cursor = root.walk();
    loop {
        if RUNS_LATER.contains(&cursor.node().kind()) {
            return true;
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return false;
            }
        }
    }
}

/// Whether the statement `node` is at the top of the program, where
/// statements run once each, in the order written: in a program with no
/// code that runs later, a name it binds holds the new value from there
/// on (`wipe = print` after `from shutil import rmtree as wipe`).
/// Anywhere else (a branch, a loop) it may not run, so a name may hold
/// either value.
fn runs_once_in_order(node: Node<'_>) -> bool {
    let mut parent = node.parent();
    while let Some(enclosing) = parent {
        if enclosing.parent().is_none() {
            return true;
        }
        if !matches!(
            enclosing.kind(),
            "expression_statement" | "lexical_declaration" | "variable_declaration"
        ) {
            return false;
        }
        parent = enclosing.parent();
    }
    true
}

/// Binds `name` in `names` to `value`, merged with what it held: a name
/// bound twice may hold either.
fn bind_merged(names: &mut HashMap<String, Value>, name: String, value: Value) {
    let merged = match names.remove(&name) {
        Some(before) => before.merge(value),
        None => value,
    };
    names.insert(name, merged);
}

struct Reader<'b, 'c> {
    builder: &'b mut Builder,
    dialect: Dialect,
    code: &'c str,
    names: HashMap<String, Value>,
    /// The functions the walk is inside, innermost last: the names each
    /// binds (its parameters, then what its body assigns), which hide the
    /// same names outside it.
    scopes: Vec<HashMap<String, Value>>,
    /// The argument nodes of calls that open files (by node id): a
    /// literal there is the path as the call reads it, not a bare one.
    file_arguments: HashSet<usize>,
    /// How many such arguments the walk is inside.
    inside_file_argument: usize,
    /// Modules whose every name is bound (`from os import *`).
    everything_of: Vec<String>,
    /// The program holds no code that runs later than it is written, so
    /// a name bound at its top holds that value from there on.
    straight_line: bool,
}

impl Reader<'_, '_> {
    fn walk(&mut self, node: Node<'_>) {
        let file_argument = self.file_arguments.contains(&node.id());
        self.inside_file_argument += usize::from(file_argument);
        self.walk_node(node);
        self.inside_file_argument -= usize::from(file_argument);
    }

    fn walk_node(&mut self, node: Node<'_>) {
        let Some(_level) = budget::nest() else { return };
        if !budget::work(1) {
            return;
        }
        match self.dialect.shape(node, self.code) {
            Shape::Scope { parameters, names } => {
                self.scope(node, parameters, names);
                return;
            }
            Shape::Call { callee, args } => self.call(callee, &args),
            Shape::Shell(pieces) => {
                let command = self.pieces(&pieces);
                self.run_shell(command, "backticks");
            }
            Shape::Bind { names, value } => {
                let value = self.eval(value);
                let replaces = self.straight_line && runs_once_in_order(node);
                for (key, name) in names {
                    let bound = match key {
                        Some(key) => self.member(value.clone(), &key),
                        None => value.clone(),
                    };
                    if replaces && self.scopes.is_empty() {
                        self.names.insert(name, bound);
                    } else {
                        self.bind(name, bound);
                    }
                }
            }
            Shape::Import(pairs) => {
                for (name, qualified) in pairs {
                    self.bind(name, Value::Api(apis::canonical(&qualified)));
                }
            }
            Shape::ImportAll(module) => self.everything_of.push(apis::canonical(&module)),
            Shape::Text(pieces) => {
                // A literal alone may yet reach a shell: its `~` is home.
                // One a file API is given was read as that API reads it.
                if let Value::Text { text, .. } = self.pieces(&pieces)
                    && self.inside_file_argument == 0
                    && looks_like_path(&home::for_shell(&text))
                {
                    self.builder.read(&home::for_shell(&text));
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            self.walk(child);
        }
    }

    /// The body of a function: its parameters hold values only its
    /// callers know ([`Value::Unknown`]: calling one is no call of an
    /// API, a path from one is known only when it runs), then its own
    /// bindings. Its parameter list, defaults included, is read where
    /// the function is defined.
    fn scope(&mut self, node: Node<'_>, parameters: Option<Node<'_>>, names: Vec<String>) {
        if let Some(parameters) = parameters {
            self.walk(parameters);
        }
        self.scopes.push(names.into_iter().map(|name| (name, Value::Unknown)).collect());
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if Some(child) != parameters {
                self.walk(child);
            }
        }
        self.scopes.pop();
    }

    /// A name bound where the walk is: in the innermost function, where
    /// it hides the name outside from there on. It is also bound, as a
    /// value the name may hold, at the top: a function may bind a global
    /// (`global`, an undeclared JavaScript name) for the code that calls
    /// it, and whatever may be the dangerous function must stay so.
    fn bind(&mut self, name: String, value: Value) {
        if let Some(scope) = self.scopes.last_mut() {
            bind_merged(scope, name.clone(), value.clone());
        }
        bind_merged(&mut self.names, name, value);
    }

    /// The value of an expression, folded as far as constants go.
    fn eval(&mut self, node: Node<'_>) -> Value {
        let Some(_level) = budget::nest() else {
            return Value::Unknown;
        };
        if !budget::work(1) {
            return Value::Unknown;
        }
        match self.dialect.shape(node, self.code) {
            Shape::Text(pieces) => self.pieces(&pieces),
            Shape::Concat(parts) => {
                let values: Vec<Value> = parts.into_iter().map(|part| self.eval(part)).collect();
                Value::concat(values)
            }
            Shape::PathJoin(left, right) => {
                let (left, right) = (self.eval(left), self.eval(right));
                Value::concat([left, Value::text("/"), right])
            }
            Shape::Name(name) => self.lookup(&name),
            Shape::Member(object, member) => {
                let object = self.eval(object);
                self.member(object, &member)
            }
            Shape::Items(items) => {
                Value::List(items.into_iter().map(|item| self.eval(item)).collect())
            }
            Shape::Same(inner) => self.eval(inner),
            Shape::Call { callee, args } => {
                let mut args = self.args(&args);
                let function = match self.callee(&callee) {
                    Some(function) => function,
                    None => {
                        let Some((receiver, method)) = self.text_receiver(&callee) else {
                            return Value::Unknown;
                        };
                        args.insert(0, (None, receiver));
                        format!("text.{method}")
                    }
                };
                apis::returns(&function, &args)
            }
            _ => Value::Unknown,
        }
    }

    fn pieces(&mut self, pieces: &[Piece<'_>]) -> Value {
        let values: Vec<Value> = pieces
            .iter()
            .map(|piece| match piece {
                Piece::Literal(text) => Value::text(text.clone()),
                Piece::Expr(node) => self.eval(*node),
            })
            .collect();
        Value::concat(values)
    }

    /// A name as bound here, or a global (a builtin, a class, a name a
    /// star import brought).
    fn lookup(&self, name: &str) -> Value {
        if let Some(value) = self.scopes.iter().rev().find_map(|scope| scope.get(name)) {
            return value.clone();
        }
        if let Some(value) = self.names.get(name) {
            return value.clone();
        }
        let imported = self
            .everything_of
            .iter()
            .map(|module| format!("{module}.{name}"))
            .find(|qualified| apis::effect(qualified).is_some());
        Value::Api(imported.unwrap_or_else(|| self.dialect.global(name)))
    }

    fn member(&self, object: Value, member: &str) -> Value {
        match object {
            Value::Api(name) => Value::Api(apis::canonical(&format!("{name}.{member}"))),
            _ => Value::Unknown,
        }
    }

    fn args(&mut self, args: &[Arg<'_>]) -> Vec<(Option<String>, Value)> {
        args.iter().map(|arg| (arg.keyword.clone(), self.eval(arg.value))).collect()
    }

    /// The qualified name of what a call calls, or, for a method of a
    /// path (`Path('x').unlink()`), the method's name on a path with the
    /// path as its first argument.
    fn callee(&mut self, callee: &Callee<'_>) -> Option<String> {
        match callee {
            Callee::Expr(node) => match self.eval(*node) {
                Value::Api(name) => Some(name),
                _ => None,
            },
            Callee::Method(receiver, method) => match self.eval(*receiver) {
                Value::Api(name) => Some(apis::canonical(&format!("{name}.{method}"))),
                _ => None,
            },
        }
    }

    /// A method called on text (`Path('x').unlink()` once `Path` is
    /// folded, `Buffer.from(…).toString()`): the text and the method.
    fn text_receiver(&mut self, callee: &Callee<'_>) -> Option<(Value, String)> {
        let (receiver, method) = match callee {
            Callee::Method(receiver, method) => (*receiver, method.clone()),
            Callee::Expr(node) => match self.dialect.shape(*node, self.code) {
                Shape::Member(object, method) => (object, method),
                _ => return None,
            },
        };
        match self.eval(receiver) {
            text @ Value::Text { .. } => Some((text, method)),
            _ => None,
        }
    }

    fn call(&mut self, callee: Callee<'_>, nodes: &[Arg<'_>]) {
        let mut args = self.args(nodes);
        let called = self.callee(&callee);
        if let Some(caller) =
            called.as_deref().filter(|name| apis::PHP_CALLERS_BY_NAME.contains(name))
        {
            self.call_by_name(caller, &args);
        }
        // An API handed over as a value (`.then(eval)`, `map(os.remove,
        // paths)`, `forEach(fs.unlinkSync)`) is called later, with values
        // not known here.
        for (_, value) in &args {
            if let Value::Api(name) = value
                && let Some(effect) = apis::effect(name)
            {
                self.report(name, effect, &[(None, Value::Unknown)]);
            }
        }
        let function = match called {
            Some(function) => function,
            None => {
                let Some((receiver, method)) = self.text_receiver(&callee) else {
                    return;
                };
                args.insert(0, (None, receiver));
                format!("path.{method}")
            }
        };
        let Some(effect) = apis::effect(&function) else {
            return;
        };
        if effect.opens_files() {
            self.file_arguments.extend(nodes.iter().map(|arg| arg.value.id()));
        }
        self.report(&function, effect, &args);
    }

    /// A PHP function handed over by its name, the first known string
    /// `caller` is given: `call_user_func` calls it with the arguments
    /// after the name, the others later with values not known here.
    fn call_by_name(&mut self, caller: &str, args: &[(Option<String>, Value)]) {
        let Some((at, name)) = args.iter().enumerate().find_map(|(at, (_, value))| match value {
            Value::Text { text, known: true } => Some((at, text)),
            _ => None,
        }) else {
            return;
        };
        let function = format!("php.{}", name.trim_start_matches('\\').to_lowercase());
        let Some(effect) = apis::effect(&function) else { return };
        let given = if caller == "php.call_user_func" {
            args.get(at + 1..).unwrap_or_default().to_vec()
        } else {
            vec![(None, Value::Unknown)]
        };
        self.report(&function, effect, &given);
    }

    fn report(&mut self, function: &str, effect: apis::Effect, args: &[(Option<String>, Value)]) {
        let via = format!("{} {function}", self.dialect.name());
        let positional: Vec<&Value> =
            args.iter().filter(|(keyword, _)| keyword.is_none()).map(|(_, value)| value).collect();
        let path = positional.first().copied().cloned().or_else(|| {
            args.iter()
                .find(|(keyword, _)| keyword.as_deref().is_some_and(apis::names_a_path))
                .map(|(_, value)| value.clone())
        });
        let path = path.unwrap_or(Value::Unknown);
        match effect {
            apis::Effect::Delete(program) => {
                // Further arguments that are paths are deleted too
                // (`unlink('a', 'b')`, `rm_rf(['a', 'b'])`); options are not.
                let mut targets = flatten(&path);
                for more in positional
                    .iter()
                    .skip(1)
                    .filter(|value| matches!(value, Value::Text { .. } | Value::List(_)))
                {
                    targets.extend(flatten(more));
                }
                for target in targets {
                    let (target, known) = target.as_path();
                    let mut argv: Vec<String> = program.split(' ').map(str::to_owned).collect();
                    argv.push(target);
                    self.builder.command(Command::new(argv, false, !known, Some(via.clone())));
                }
            }
            apis::Effect::Write => self.write(&path),
            apis::Effect::WriteText { appends } => {
                let appends = appends
                    || positional.iter().skip(2).any(|value| value.as_text().0.contains("APPEND"))
                    || args.iter().any(|(keyword, value)| {
                        keyword.as_deref() == Some("mode") && value.as_text().0.contains('a')
                    });
                let content = match positional.get(1) {
                    Some(Value::Text { text, known: true }) => Some(text.clone()),
                    _ => None,
                };
                self.write_text(&path, content, appends);
            }
            apis::Effect::Open { mode_at, default_writes } => {
                let mode = args
                    .iter()
                    .find(|(keyword, _)| keyword.as_deref() == Some("mode"))
                    .map(|(_, value)| value)
                    .or_else(|| positional.get(mode_at).copied());
                let (writes, reads) = match mode {
                    Some(Value::Text { text, .. }) => {
                        (apis::mode_writes(text), apis::mode_reads(text))
                    }
                    Some(_) => (true, true),
                    None => (default_writes, !default_writes),
                };
                if writes {
                    self.write(&path);
                }
                if reads {
                    self.read(&path);
                }
            }
            apis::Effect::Read => self.read(&path),
            apis::Effect::Copy => {
                self.read(&path);
                self.write(&destination(&positional, args));
            }
            // What `mv` does with the same words: the effects of a move
            // (`effects`) are the shell's and the code's alike.
            apis::Effect::Move => {
                let (source, source_known) = path.as_path();
                let (landing, landing_known) = destination(&positional, args).as_path();
                self.builder.command(Command::new(
                    vec!["mv".into(), source, landing],
                    false,
                    !(source_known && landing_known),
                    Some(via),
                ));
            }
            apis::Effect::Truncate { length_at } => {
                let length = match positional.get(length_at) {
                    None => "0".to_owned(),
                    Some(value) => value.as_shell_text().0,
                };
                let (target, known) = path.as_path();
                self.write(&path);
                self.builder.command(Command::new(
                    vec!["truncate".into(), "-s".into(), length, target],
                    false,
                    !known,
                    Some(via),
                ));
            }
            apis::Effect::Shell => self.run_shell(path, function),
            apis::Effect::Command => match (positional.len(), &path) {
                (0 | 1, Value::List(items)) => self.run_argv(items, &via),
                (0 | 1, _) => self.run_shell(path, function),
                _ => self.run_argv(
                    &positional.iter().map(|value| (*value).clone()).collect::<Vec<_>>(),
                    &via,
                ),
            },
            apis::Effect::ProgramArgs => {
                let mut argv = vec![path];
                argv.extend(positional.get(1).map(|args| flatten(args)).unwrap_or_default());
                self.run_argv(&argv, &via);
            }
            apis::Effect::Exec => {
                let argv = match positional.iter().find(|value| matches!(value, Value::List(_))) {
                    Some(list) => flatten(list),
                    None => {
                        let program = positional
                            .iter()
                            .position(|value| matches!(value, Value::Text { .. }))
                            .unwrap_or(0);
                        let rest: Vec<Value> = positional
                            .iter()
                            .skip(program + 1)
                            .map(|value| (*value).clone())
                            .collect();
                        if rest.is_empty() {
                            positional
                                .get(program)
                                .map(|value| vec![(*value).clone()])
                                .unwrap_or_default()
                        } else {
                            rest
                        }
                    }
                };
                self.run_argv(&argv, &via);
            }
            apis::Effect::Eval => match path {
                Value::Text { text, known: true } => {
                    super::analyze(self.builder, self.dialect.name(), &home::for_shell(&text))
                }
                // Code that fetches from the network and evaluates text
                // it builds runs what it downloads.
                _ if super::uses_network(self.code) => self.builder.fact(
                    Fact::RunsDownloadedCode,
                    format!("{via} evaluates code built at run time, in code that downloads"),
                ),
                _ => self.builder.fact(
                    Fact::EvalOfUnknownText,
                    format!("{via} evaluates code built at run time"),
                ),
            },
        }
    }

    fn write(&mut self, path: &Value) {
        for target in flatten(path) {
            self.builder.write(&target.as_path().0);
        }
    }

    /// A write of `content` to `path`, judged as the file's content when
    /// both are known (a file that runs later is then read for what it
    /// plants), a write not judged otherwise.
    fn write_text(&mut self, path: &Value, content: Option<String>, appends: bool) {
        match (path, content) {
            (Value::Text { known: true, .. }, Some(content)) => {
                let (target, _) = path.as_path();
                self.builder.write_judged(&target);
                let change = if appends { Change::Append(content) } else { Change::Whole(content) };
                self.builder.pending_writes.push(FileWrite { path: target, change });
            }
            _ => self.write(path),
        }
    }

    /// A file read. A path nothing of which is known is not reported:
    /// reads of files named at run time are everywhere, and a read alone
    /// changes nothing.
    fn read(&mut self, path: &Value) {
        for source in flatten(path) {
            let (text, _) = source.as_path();
            if !text.split(UNKNOWN).all(str::is_empty) {
                self.builder.read(&text);
            }
        }
    }

    /// Text a shell runs: analysed as shell when it is known, a fact when
    /// nothing of it is.
    fn run_shell(&mut self, command: Value, function: &str) {
        match command {
            Value::Text { text, .. } if !text.trim().is_empty() && text != UNKNOWN => {
                // The shell reads an unknown part as a value it cannot
                // know, never as a program named `…`.
                let script = home::for_shell(&text).replace(UNKNOWN, "$CODE_VALUE");
                self.builder.shell_lenient(&script, Some(self.dialect.name()));
            }
            Value::List(items) => self.run_argv(&items, function),
            _ => self.builder.fact(
                Fact::EvalOfUnknownText,
                format!("{} {function} runs a command built at run time", self.dialect.name()),
            ),
        }
    }

    fn run_argv(&mut self, argv: &[Value], via: &str) {
        let words: Vec<(String, bool)> =
            argv.iter().flat_map(flatten).map(|value| value.as_shell_text()).collect();
        let Some((_, program_known)) = words.first() else {
            self.builder
                .fact(Fact::EvalOfUnknownText, format!("{via} starts a program named at run time"));
            return;
        };
        let dynamic_args = words.iter().skip(1).any(|(_, known)| !known);
        let argv: Vec<String> = words.iter().map(|(word, _)| word.clone()).collect();
        self.builder.command(Command::new(
            argv,
            !program_known,
            dynamic_args,
            Some(via.to_owned()),
        ));
    }
}

/// Where a copy or a move lands: the argument after the source, or the
/// one named `dst` (Python) or `dest`.
fn destination(positional: &[&Value], args: &[(Option<String>, Value)]) -> Value {
    positional.get(1).copied().cloned().unwrap_or_else(|| {
        args.iter()
            .find(|(keyword, _)| matches!(keyword.as_deref(), Some("dst" | "dest")))
            .map_or(Value::Unknown, |(_, value)| value.clone())
    })
}

/// The items of a list, or the value itself. Values nest no deeper than
/// the syntax [`Reader::eval`] entered, which held a level for each.
fn flatten(value: &Value) -> Vec<Value> {
    match value {
        Value::List(items) => items.iter().flat_map(flatten).collect(),
        other => vec![other.clone()],
    }
}
