//! Policies: TOML files (`raw`) compiled into one immutable
//! [`CompiledPolicy`] with a single pattern set, and the question the
//! evaluator asks of it: which rules match this hint for this agent.
//!
//! Several files merge in order. Lists of rules add up. `[defaults]`
//! scalars can only tighten across files (the smaller
//! `maxAutonomousSteps`, the more conservative `riskTolerance`). An
//! `[agents."glob"]` section applies to agents whose `element_name`
//! matches the glob: its `deny` and `requiresApproval` add to the defaults,
//! its scalars replace them, and its `autoApprove`, when present, replaces
//! the defaults' list for those agents. When several sections match, later
//! ones win. A policy that fails any check has no runtime form: loading
//! returns every error, located `file:line:col`.
//!
//! A central policy pushed to the shared state comes first, with the
//! machine's own files layered on it so that they can only make its
//! decisions stricter, and, unless the config file lets the central
//! policy replace them, the machine's own files (or the embedded default)
//! stay a floor under it (`central`).
//!
//! Rules may carry examples (actions they must decide) and counterexamples
//! (actions they must not match); they are kept, located, with the rules
//! they belong to, and `lab::examples` checks them against the policy.

pub mod central;
pub mod live;
pub mod pattern;
pub mod raw;

use crate::names::named_enum;
use std::{
    fmt,
    ops::Range,
    path::{Path, PathBuf},
    sync::Arc,
};

use sha2::{Digest, Sha256};

use crate::{
    analysis::{Analysis, Fact},
    config::{CentralPolicy, refuse_unsafe_permissions},
    diagnostics::{Diagnostic, SourceFile, toml_doc},
};

use central::{Floor, Layers};
use pattern::{PatternKind, PatternSet};
use raw::{RawPolicy, RawRule, RawSection};

/// The policy used when the configuration names none.
pub const EMBEDDED_DEFAULT: &str = include_str!("../../policies/default.toml");
pub const EMBEDDED_DEFAULT_NAME: &str = "default.toml";

named_enum! {
    /// How much risk an agent may take before stage 5 pauses it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum RiskTolerance {
        Conservative => "conservative",
        Moderate => "moderate",
        Aggressive => "aggressive",
    }
}

impl RiskTolerance {
    /// Scores above this pause the agent (spec 8.7.2, stage 5).
    pub fn threshold(self) -> u8 {
        match self {
            Self::Conservative => 25,
            Self::Moderate => 50,
            Self::Aggressive => 75,
        }
    }
}

/// Where a rule was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The policy file's name (not its full path).
    pub file: Arc<str>,
    pub line: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "policy {}:{}", self.file, self.line)
    }
}

/// What a matching rule does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleAction {
    Deny,
    RequiresApproval,
    AutoApprove,
    Risk { score: u8, reason: String },
}

/// Which agents a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Defaults,
    /// The agent section with this index.
    Agents(usize),
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub action: RuleAction,
    /// The pattern as written.
    pub pattern: String,
    pub kind: PatternKind,
    pub scope: Scope,
    pub origin: Origin,
}

impl Rule {
    /// `deny pattern 'rm -rf /*' (policy default.toml:12)`.
    pub fn describe(&self) -> String {
        let what = match (&self.action, self.kind) {
            (RuleAction::Deny, _) => "deny pattern",
            (RuleAction::RequiresApproval, _) => "requiresApproval pattern",
            (RuleAction::AutoApprove, _) => "autoApprove pattern",
            (RuleAction::Risk { .. }, PatternKind::Glob) => "risk pattern",
            (RuleAction::Risk { .. }, PatternKind::Keyword) => "risk keyword",
        };
        format!("{what} '{}' ({})", self.pattern, self.origin)
    }
}

/// An action written in a policy file as an example of a rule, with
/// where it was written.
#[derive(Debug, Clone)]
pub struct Example {
    pub text: String,
    pub at: Diagnostic,
}

/// A rule of a compiled policy: its place among the policy's rules, made
/// only by the policy (from its pattern tables, its examples' ranges and
/// [`CompiledPolicy::rule_ids`]), and read back with
/// [`CompiledPolicy::rule`]. A central floor's ids are put in the layered
/// policy's numbering by [`RuleId::after`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId(usize);

impl RuleId {
    /// This floor's rule as the rule of the layered policy whose rules
    /// begin with `first_rule` others.
    pub fn after(self, first_rule: usize) -> Self {
        Self(self.0 + first_rule)
    }
}

/// The examples of one rule, or of one `[[risk]]` table (whose patterns
/// and keywords are several rules that share an action).
#[derive(Debug, Clone)]
pub struct RuleExamples {
    /// The rules they belong to, as indices into the policy's rules
    /// (see [`RuleExamples::first_rule`], [`RuleExamples::covers`]).
    rules: Range<usize>,
    /// The file they were written in, as its index in merge order.
    pub source: usize,
    /// Actions the rules must decide as their action says.
    pub examples: Vec<Example>,
    /// Actions the rules must not match.
    pub counterexamples: Vec<Example>,
}

impl RuleExamples {
    /// The rule whose action the examples are judged by (the first of a
    /// `[[risk]]` table's, which all share it).
    pub fn first_rule(&self) -> RuleId {
        RuleId(self.rules.start)
    }

    /// Whether `rule` is one of the rules the examples belong to.
    pub fn covers(&self, rule: RuleId) -> bool {
        self.rules.contains(&rule.0)
    }
}

struct AgentSection {
    glob: globset::GlobMatcher,
    pattern: String,
    max_steps: Option<u32>,
    tolerance: Option<RiskTolerance>,
    replaces_auto_approve: bool,
}

/// The settings in force for one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentSettings {
    pub max_steps: u32,
    pub tolerance: RiskTolerance,
    /// The agent section whose `autoApprove` replaces the defaults', if any.
    auto_approve_from: Option<usize>,
    sections: AgentSectionMask,
}

/// Which agent sections apply, as a bit set (sections beyond 128 are
/// refused at load time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct AgentSectionMask(u128);

const MAX_AGENT_SECTIONS: usize = 128;
const DEFAULT_MAX_STEPS: u32 = 50;

/// Rules that matched an action for an agent, as indices into the
/// policy's rules, each list in policy order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Matches {
    pub deny: Vec<RuleId>,
    pub requires_approval: Vec<RuleId>,
    /// For each command, the autoApprove rule that covers it; `None` unless
    /// every command is covered and nothing about the action needs a human.
    pub auto_approve: Option<Vec<RuleId>>,
    pub risk: Vec<RuleId>,
    /// Rules (deny, requiresApproval, risk) matched only by what the action
    /// may run (`Analysis::possible`: words given to a program with no
    /// model, a command as an unquoted value may turn it): at most a
    /// question for a human, never a stop.
    pub may_run: Vec<RuleId>,
    /// What each matching rule matched (a command, a path, a fact), by rule.
    pub subjects: std::collections::BTreeMap<RuleId, String>,
    /// Facts that make the action need a human whatever the rules say.
    pub needs_a_human: Vec<(Fact, String)>,
}

impl Matches {
    /// The same matches with every rule index moved on by `offset`: a
    /// floor's matches (`central::Floor::first_rule`) as indices into the
    /// layered policy's rules.
    pub fn shifted(self, offset: usize) -> Self {
        let shift = |rules: Vec<RuleId>| {
            rules.into_iter().map(|rule| rule.after(offset)).collect::<Vec<_>>()
        };
        Self {
            deny: shift(self.deny),
            requires_approval: shift(self.requires_approval),
            auto_approve: self.auto_approve.map(shift),
            risk: shift(self.risk),
            may_run: shift(self.may_run),
            subjects: self
                .subjects
                .into_iter()
                .map(|(rule, subject)| (rule.after(offset), subject))
                .collect(),
            needs_a_human: self.needs_a_human,
        }
    }

    /// `deny pattern 'rm -rf ~' (policy default.toml:12) on `rm -rf ~``.
    pub fn describe(&self, policy: &CompiledPolicy, rule: RuleId) -> String {
        match self.subjects.get(&rule) {
            Some(subject) => format!("{} on {subject}", policy.rule(rule).describe()),
            None => policy.rule(rule).describe(),
        }
    }
}

/// All policy files merged and compiled; immutable and shared.
pub struct CompiledPolicy {
    rules: Vec<Rule>,
    patterns: PatternSet,
    default_max_steps: u32,
    default_tolerance: RiskTolerance,
    agent_sections: Vec<AgentSection>,
    examples: Vec<RuleExamples>,
    /// How patterns that could be read two ways were read, located at
    /// the pattern (`check` prints them; they are not errors).
    notes: Vec<Diagnostic>,
    hash: String,
    /// Each file's name and text, as kept beside the audit trail.
    texts: Vec<StoredSource>,
    /// The central version those files were pushed as, when known.
    central_version: Option<i64>,
    /// The layers compiled alone, when files were layered on a central
    /// policy (`central`): no decision may be looser than any of theirs.
    floors: Vec<Floor>,
    /// The embedded default stands in for policy files none were named.
    stands_in: bool,
    /// How a central version stands to this machine's own files.
    under_central: CentralPolicy,
}

/// A policy file as kept beside the audit trail (`policy_versions`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct StoredSource {
    path: String,
    text: String,
    /// One of a central policy's files (kept only when set, so the
    /// sources of policies without one read as they always did).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    central: bool,
    /// One of the machine's own files, kept as a floor under the central
    /// ones (`CentralPolicy::Floor`; kept only when set, likewise).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    floor: bool,
}

/// Why a policy kept beside the audit trail cannot be used again.
#[derive(Debug, thiserror::Error)]
pub enum StoredPolicyError {
    #[error("the kept sources are not readable: {0}")]
    Unreadable(#[from] serde_json::Error),
    #[error("the kept policy no longer compiles ({} error(s), the first: {})", .0.len(), .0.first().map(ToString::to_string).unwrap_or_default())]
    Invalid(Vec<Diagnostic>),
    #[error("the kept sources hash to {found}, not to the {expected} the audit rows name")]
    Mismatch { expected: String, found: String },
}

/// A policy file's name and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySource {
    pub path: PathBuf,
    pub text: String,
}

impl PolicySource {
    /// Reads a file, refusing one that group or others can write.
    pub fn read(path: &Path) -> Result<Self, Diagnostic> {
        refuse_unsafe_permissions(path)?;
        SourceFile::read(path).map(|file| Self { path: file.path, text: file.text })
    }

    pub fn embedded_default() -> Self {
        Self { path: PathBuf::from(EMBEDDED_DEFAULT_NAME), text: EMBEDDED_DEFAULT.to_owned() }
    }

    /// Reads every file, or says what is wrong with each that cannot be.
    pub fn read_all(paths: &[PathBuf]) -> Result<Vec<Self>, Vec<Diagnostic>> {
        let (sources, errors): (Vec<_>, Vec<_>) =
            paths.iter().map(|path| Self::read(path)).partition(Result::is_ok);
        if errors.is_empty() {
            Ok(sources.into_iter().flatten().collect())
        } else {
            Err(errors.into_iter().filter_map(Result::err).collect())
        }
    }
}

impl CompiledPolicy {
    /// Loads the given files, or the embedded default when there are none,
    /// to stand `under_central` a central policy when one is taken up.
    pub fn load(paths: &[PathBuf], under_central: CentralPolicy) -> Result<Self, Vec<Diagnostic>> {
        Self::layered(None, &PolicySource::read_all(paths)?, under_central)
    }

    /// Compiles policy sources, merged in order.
    pub fn compile(sources: &[PolicySource]) -> Result<Self, Vec<Diagnostic>> {
        Self::compile_layers(sources, Layers::default())
    }

    /// Compiles policy sources merged in order, layered as `layers` says
    /// (`policy::central`), which the hash covers.
    fn compile_layers(sources: &[PolicySource], layers: Layers) -> Result<Self, Vec<Diagnostic>> {
        let mut builder = Builder::default();
        let mut errors = Vec::new();
        for source in sources {
            let file = SourceFile::new(source.path.clone(), source.text.clone());
            let (raw, found) = toml_doc::load_partial::<RawPolicy>(&file);
            errors.extend(found);
            if let Some(raw) = raw {
                builder.add(&file, raw, &mut errors);
            }
            builder.source += 1;
        }
        let patterns = builder.compile_patterns(&mut errors);
        match patterns {
            Some(patterns) if errors.is_empty() => Ok(builder.finish(patterns, sources, layers)),
            _ => {
                errors.sort_by(|a, b| (&a.file, a.line, a.col).cmp(&(&b.file, b.line, b.col)));
                Err(errors)
            }
        }
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// How patterns that could be read two ways were read (`rm -rf*`,
    /// `*force*`, `rm -rf /*`), located `file:line:col`.
    pub fn notes(&self) -> &[Diagnostic] {
        &self.notes
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "a rule id is only ever made by this policy (or its layers, moved into its numbering), one per rule"
    )]
    pub fn rule(&self, id: RuleId) -> &Rule {
        &self.rules[id.0]
    }

    /// Every rule with its id, in policy order.
    pub fn rule_ids(&self) -> impl Iterator<Item = (RuleId, &Rule)> {
        self.rules.iter().enumerate().map(|(index, rule)| (RuleId(index), rule))
    }

    /// SHA-256 of the sources, recorded with every audit row.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The files' names and texts as JSON, for `audit::remember_policy`.
    pub fn stored_sources(&self) -> String {
        serde_json::to_string(&self.texts).unwrap_or_default()
    }

    /// The policy made of the first `files` files only: as it stood when
    /// the next one was merged.
    pub fn prefix(&self, files: usize) -> Result<Self, Vec<Diagnostic>> {
        let sources: Vec<PolicySource> = self
            .texts
            .iter()
            .take(files)
            .map(|source| PolicySource {
                path: PathBuf::from(&source.path),
                text: source.text.clone(),
            })
            .collect();
        Self::compile(&sources)
    }

    /// The policy kept beside the audit trail under `hash`, compiled again.
    pub fn from_stored(hash: &str, stored: &str) -> Result<Self, StoredPolicyError> {
        let texts: Vec<StoredSource> = serde_json::from_str(stored)?;
        let central_files = texts.iter().take_while(|source| source.central).count();
        let under_central = if texts.iter().any(|source| source.floor) {
            CentralPolicy::Floor
        } else {
            CentralPolicy::Replace
        };
        let sources: Vec<PolicySource> = texts
            .into_iter()
            .map(|source| PolicySource { path: PathBuf::from(source.path), text: source.text })
            .collect();
        let (central, local) = sources.split_at(central_files);
        let policy =
            Self::on_floor(central, local, under_central).map_err(StoredPolicyError::Invalid)?;
        if policy.hash != hash {
            return Err(StoredPolicyError::Mismatch {
                expected: hash.to_owned(),
                found: policy.hash,
            });
        }
        Ok(policy)
    }

    /// The names of the files this policy was compiled from.
    pub fn sources(&self) -> Vec<&str> {
        self.texts.iter().map(|source| source.path.as_str()).collect()
    }

    pub fn default_max_steps(&self) -> u32 {
        self.default_max_steps
    }

    pub fn default_tolerance(&self) -> RiskTolerance {
        self.default_tolerance
    }

    /// The agent globs of the policy's sections, in order.
    pub fn section_patterns(&self) -> impl Iterator<Item = &str> {
        self.agent_sections.iter().map(|section| section.pattern.as_str())
    }

    /// The settings in force for `agent`: never looser than any floor's.
    pub fn settings_for(&self, agent: &str) -> AgentSettings {
        let mut settings = self.own_settings_for(agent);
        for floor in &self.floors {
            let floor = floor.policy.own_settings_for(agent);
            settings.max_steps = settings.max_steps.min(floor.max_steps);
            settings.tolerance = settings.tolerance.min(floor.tolerance);
        }
        settings
    }

    /// The settings this policy's own rules give `agent`.
    fn own_settings_for(&self, agent: &str) -> AgentSettings {
        let mut settings = AgentSettings {
            max_steps: self.default_max_steps,
            tolerance: self.default_tolerance,
            auto_approve_from: None,
            sections: AgentSectionMask::default(),
        };
        for (index, section) in self.agent_sections.iter().enumerate() {
            if !section.glob.is_match(agent) {
                continue;
            }
            settings.sections.0 |= 1 << index;
            if let Some(steps) = section.max_steps {
                settings.max_steps = steps;
            }
            if let Some(tolerance) = section.tolerance {
                settings.tolerance = tolerance;
            }
            if section.replaces_auto_approve {
                settings.auto_approve_from = Some(index);
            }
        }
        settings
    }

    /// The examples written with the rules, in policy order.
    pub fn examples(&self) -> &[RuleExamples] {
        &self.examples
    }

    /// The agent glob of the section with this index (a rule's
    /// [`Scope::Agents`]).
    pub fn section_pattern(&self, index: usize) -> Option<&str> {
        self.agent_sections.get(index).map(|section| section.pattern.as_str())
    }

    /// The agent section patterns that apply to an agent, for explanations.
    pub fn sections_for(&self, settings: &AgentSettings) -> Vec<&str> {
        self.agent_sections
            .iter()
            .enumerate()
            .filter(|(i, _)| settings.sections.0 & (1 << i) != 0)
            .map(|(_, s)| s.pattern.as_str())
            .collect()
    }

    fn applies(&self, rule: &Rule, settings: &AgentSettings) -> bool {
        let in_scope = match rule.scope {
            Scope::Defaults => true,
            Scope::Agents(index) => settings.sections.0 & (1 << index) != 0,
        };
        if rule.action != RuleAction::AutoApprove {
            return in_scope;
        }
        match settings.auto_approve_from {
            Some(index) => rule.scope == Scope::Agents(index),
            None => rule.scope == Scope::Defaults,
        }
    }

    /// The rules that match an action's analysis for an agent.
    pub fn matches(&self, analysis: &Analysis, settings: &AgentSettings) -> Matches {
        let prepared = self.patterns.prepare(analysis);
        let mut matches = Matches::default();
        for (id, rule, subject) in self.hits(&prepared, settings) {
            match rule.action {
                RuleAction::Deny => matches.deny.push(id),
                RuleAction::RequiresApproval => matches.requires_approval.push(id),
                RuleAction::Risk { .. } => matches.risk.push(id),
                RuleAction::AutoApprove => continue,
            }
            matches.subjects.insert(id, subject);
        }
        if let Some(possible) = &analysis.possible {
            for (id, rule, subject) in self.hits(&self.patterns.prepare(possible), settings) {
                if rule.action == RuleAction::AutoApprove || matches.subjects.contains_key(&id) {
                    continue;
                }
                matches.may_run.push(id);
                matches.subjects.insert(id, subject);
            }
        }
        matches.needs_a_human =
            analysis.facts.iter().filter(|(fact, _)| fact.needs_a_human()).cloned().collect();
        matches.auto_approve = self.auto_approval(&prepared, analysis, settings);
        matches
    }

    /// Each rule that applies to the agent and matched, with what it matched.
    fn hits<'p>(
        &'p self,
        prepared: &pattern::Prepared<'_>,
        settings: &'p AgentSettings,
    ) -> impl Iterator<Item = (RuleId, &'p Rule, String)> + 'p {
        self.rules.iter().zip(prepared.matches()).enumerate().filter_map(|(index, (rule, hit))| {
            let subject = hit.filter(|_| self.applies(rule, settings))?;
            Some((RuleId(index), rule, subject))
        })
    }

    /// Every command covered by an autoApprove rule, and no fact at all.
    fn auto_approval(
        &self,
        prepared: &pattern::Prepared<'_>,
        analysis: &Analysis,
        settings: &AgentSettings,
    ) -> Option<Vec<RuleId>> {
        if analysis.commands.is_empty() || !analysis.facts.is_empty() {
            return None;
        }
        let is_auto = |index: usize| {
            self.rules.get(index).is_some_and(|rule| {
                rule.action == RuleAction::AutoApprove && self.applies(rule, settings)
            })
        };
        (0..analysis.commands.len())
            .map(|command| prepared.covering(command, is_auto).map(RuleId))
            .collect()
    }
}

#[derive(Default)]
struct Builder {
    rules: Vec<Rule>,
    /// Where each rule's pattern was written, for errors found when the
    /// patterns are compiled together.
    locations: Vec<Diagnostic>,
    max_steps: Option<u32>,
    tolerance: Option<RiskTolerance>,
    agent_sections: Vec<AgentSection>,
    examples: Vec<RuleExamples>,
    /// The index of the file being added, in merge order.
    source: usize,
}

impl Builder {
    fn add(&mut self, file: &SourceFile, raw: RawPolicy, errors: &mut Vec<Diagnostic>) {
        let name: Arc<str> = file
            .path
            .file_name()
            .map_or_else(|| file.path.display().to_string(), |n| n.to_string_lossy().into_owned())
            .into();
        if let Some(defaults) = raw.defaults {
            let (steps, tolerance) =
                self.add_section(file, &name, &defaults, Scope::Defaults, errors);
            self.max_steps = match (self.max_steps, steps) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            self.tolerance = match (self.tolerance, tolerance) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        for (pattern, section) in &raw.agents {
            let Some(glob) = agent_glob(pattern) else {
                errors.push(
                    file.at(
                        section.span(),
                        format!("agents.\"{pattern}\": not a valid agent glob"),
                    ),
                );
                continue;
            };
            if self.agent_sections.len() == MAX_AGENT_SECTIONS {
                errors.push(
                    file.at(
                        section.span(),
                        format!("more than {MAX_AGENT_SECTIONS} agent sections"),
                    ),
                );
                continue;
            }
            let index = self.agent_sections.len();
            let (max_steps, tolerance) =
                self.add_section(file, &name, section.get_ref(), Scope::Agents(index), errors);
            self.agent_sections.push(AgentSection {
                glob,
                pattern: pattern.clone(),
                max_steps,
                tolerance,
                replaces_auto_approve: section.get_ref().auto_approve.is_some(),
            });
        }
        for risk in &raw.risk {
            let rule = risk.get_ref();
            let score = *rule.score.get_ref();
            if !(0..=100).contains(&score) {
                errors.push(file.at(rule.score.span(), "score must be between 0 and 100"));
                continue;
            }
            if rule.patterns.is_empty() && rule.keywords.is_empty() {
                errors.push(
                    file.at(risk.span(), "a [[risk]] rule needs `match` patterns or `keywords`"),
                );
            }
            if rule.reason.get_ref().trim().is_empty() {
                errors.push(file.at(rule.reason.span(), "reason must not be empty"));
            }
            let action =
                RuleAction::Risk { score: score as u8, reason: rule.reason.get_ref().clone() };
            let first = self.rules.len();
            for pattern in &rule.patterns {
                self.push(file, &name, action.clone(), pattern, PatternKind::Glob, Scope::Defaults);
            }
            for keyword in &rule.keywords {
                self.push(
                    file,
                    &name,
                    action.clone(),
                    keyword,
                    PatternKind::Keyword,
                    Scope::Defaults,
                );
            }
            self.add_examples(file, first, &rule.examples, &rule.counterexamples);
        }
    }

    /// Adds a section's rules; returns its scalar settings.
    fn add_section(
        &mut self,
        file: &SourceFile,
        name: &Arc<str>,
        section: &RawSection,
        scope: Scope,
        errors: &mut Vec<Diagnostic>,
    ) -> (Option<u32>, Option<RiskTolerance>) {
        let max_steps =
            section.max_autonomous_steps.as_ref().and_then(|steps| {
                match u32::try_from(*steps.get_ref()) {
                    Ok(n) if n >= 1 => Some(n),
                    _ => {
                        errors.push(file.at(
                            steps.span(),
                            "maxAutonomousSteps must be a whole number of at least 1",
                        ));
                        None
                    }
                }
            });
        let tolerance = section.risk_tolerance.as_ref().and_then(|t| {
            let parsed = RiskTolerance::parse(t.get_ref());
            if parsed.is_none() {
                errors.push(
                    file.at(t.span(), "riskTolerance must be conservative, moderate or aggressive"),
                );
            }
            parsed
        });
        let lists = [
            (RuleAction::Deny, &section.deny),
            (RuleAction::RequiresApproval, &section.requires_approval),
        ];
        let auto_approve =
            section.auto_approve.iter().map(|rules| (RuleAction::AutoApprove, rules));
        for (action, rules) in lists.into_iter().chain(auto_approve) {
            for rule in rules {
                let first = self.rules.len();
                self.push(
                    file,
                    name,
                    action.clone(),
                    &RawRule::pattern(rule),
                    PatternKind::Glob,
                    scope,
                );
                self.add_examples(
                    file,
                    first,
                    rule.get_ref().examples(),
                    rule.get_ref().counterexamples(),
                );
            }
        }
        (max_steps, tolerance)
    }

    /// Keeps the examples of the rules pushed since `first`, located.
    fn add_examples(
        &mut self,
        file: &SourceFile,
        first: usize,
        examples: &[toml::Spanned<String>],
        counterexamples: &[toml::Spanned<String>],
    ) {
        if examples.is_empty() && counterexamples.is_empty() {
            return;
        }
        let located = |list: &[toml::Spanned<String>]| -> Vec<Example> {
            list.iter()
                .map(|example| Example {
                    text: example.get_ref().clone(),
                    at: file.at(example.span(), ""),
                })
                .collect()
        };
        self.examples.push(RuleExamples {
            rules: first..self.rules.len(),
            source: self.source,
            examples: located(examples),
            counterexamples: located(counterexamples),
        });
    }

    fn push(
        &mut self,
        file: &SourceFile,
        name: &Arc<str>,
        action: RuleAction,
        pattern: &toml::Spanned<String>,
        kind: PatternKind,
        scope: Scope,
    ) {
        let at = file.at(pattern.span(), "");
        self.rules.push(Rule {
            action,
            pattern: pattern.get_ref().clone(),
            kind,
            scope,
            origin: Origin { file: name.clone(), line: at.line },
        });
        self.locations.push(at);
    }

    /// Compiles every rule's pattern into one set; `None` with an error
    /// per bad pattern, at the pattern.
    #[expect(
        clippy::indexing_slicing,
        reason = "the pattern set is built from these rules, one pattern and one location per rule, so every index it reports names one"
    )]
    fn compile_patterns(&self, errors: &mut Vec<Diagnostic>) -> Option<PatternSet> {
        let located =
            |index: usize, message: String| Diagnostic { message, ..self.locations[index].clone() };
        let patterns =
            match PatternSet::new(self.rules.iter().map(|r| (r.pattern.as_str(), r.kind))) {
                Ok(patterns) => patterns,
                Err(failed) => {
                    errors.extend(failed.into_iter().map(|(index, error)| {
                        located(
                            index,
                            format!("invalid pattern '{}': {}", self.rules[index].pattern, error.0),
                        )
                    }));
                    return None;
                }
            };
        let before = errors.len();
        for (index, rule) in self.rules.iter().enumerate() {
            if rule.action == RuleAction::AutoApprove && !patterns.is_command(index) {
                errors.push(located(index, format!("autoApprove takes command patterns only, a program first (`ls`, `read_*`), not '{}'", rule.pattern)));
            }
        }
        (errors.len() == before).then_some(patterns)
    }

    #[expect(
        clippy::indexing_slicing,
        reason = "the pattern set is built from these rules, one pattern and one location per rule, so every index it reports names one"
    )]
    fn finish(
        self,
        patterns: PatternSet,
        sources: &[PolicySource],
        layers: Layers,
    ) -> CompiledPolicy {
        let central_files = layers.central_files;
        let notes = patterns
            .notes()
            .iter()
            .map(|(index, note)| Diagnostic {
                message: format!("pattern '{}': {}", self.rules[*index].pattern, note.0),
                ..self.locations[*index].clone()
            })
            .collect();
        let mut hasher = Sha256::new();
        if central_files > 0 && central_files < sources.len() {
            // Layered, the same files decide differently than merged, and
            // differently again with the machine's files as a floor.
            let floor = if layers.machine_floor { " machine floor" } else { "" };
            hasher.update(format!("central {central_files}{floor}").as_bytes());
            hasher.update([0]);
        }
        for source in sources {
            hasher.update(source.path.display().to_string().as_bytes());
            hasher.update([0]);
            hasher.update(source.text.as_bytes());
            hasher.update([0]);
        }
        CompiledPolicy {
            rules: self.rules,
            patterns,
            default_max_steps: self.max_steps.unwrap_or(DEFAULT_MAX_STEPS),
            default_tolerance: self.tolerance.unwrap_or(RiskTolerance::Moderate),
            agent_sections: self.agent_sections,
            examples: self.examples,
            notes,
            hash: crate::hex::encode(&hasher.finalize()),
            texts: sources
                .iter()
                .enumerate()
                .map(|(i, s)| StoredSource {
                    path: s.path.display().to_string(),
                    text: s.text.clone(),
                    central: i < central_files,
                    floor: layers.machine_floor && i >= central_files,
                })
                .collect(),
            central_version: None,
            floors: Vec::new(),
            stands_in: false,
            under_central: CentralPolicy::default(),
        }
    }
}

/// An `element_name` glob, matched against the whole name,
/// case-sensitively.
fn agent_glob(pattern: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

#[cfg(test)]
mod tests;
