//! Loading what the audit and the inspector read: a journal (in the order its records
//! were written), a saved history, or a transcript replayed under the policy with a
//! ledger observing it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use favur_context::audit::Ledger;
use favur_context::compact::{BuiltinSummarizer, Edit};
use favur_context::import::Format;
use favur_context::import::rules::Rules;
use favur_context::journal::OpenOptions;
use favur_context::store::SealKey;
use favur_context::{EntryId, History, Policy, ToolCall};

use crate::ReplayError;
use crate::audit_error::AuditError;
use crate::engine::{LibRenderer, PolicyStrategy};
use crate::replay::{Fate, Prepared, replay};
use crate::report::Summary;
use crate::strategy::{Before, Strategy};
use crate::transcript::load;
use crate::wiring::{CliError, InputFormat, load_policy};

/// How `audit` and `inspect` read transcripts: the rules that classify them and the
/// policy they are replayed under (journals and histories need neither).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ObserveArgs {
    /// The rules file that classifies transcripts (TOML); needed for transcripts.
    #[arg(long)]
    pub rules: Option<std::path::PathBuf>,
    /// The compaction policy transcripts are replayed under (a TOML or JSON policy file,
    /// or `default`); needed for transcripts. For journals and histories its tiers decide
    /// which class change would change anything (default: the design's tiers).
    #[arg(long)]
    pub policy: Option<String>,
    /// The model's context window in tokens (overrides the policy file's).
    #[arg(long)]
    pub window: Option<u64>,
    /// Override the policy's `keep_recent`.
    #[arg(long)]
    pub keep_recent: Option<usize>,
    /// The transcripts' format (detected per file when not given).
    #[arg(long, value_enum)]
    pub format: Option<InputFormat>,
    /// A file holding the seal key of sealed journals (its bytes, at least 32): a sealed
    /// journal is read only with its key, every record verified.
    #[arg(long)]
    pub seal_key_file: Option<std::path::PathBuf>,
}

impl ObserveArgs {
    /// The policy and the rules, each loaded when given.
    ///
    /// # Errors
    ///
    /// A policy or rules file that does not load.
    pub fn load(&self) -> Result<(Option<Policy>, Option<Rules>), AuditError> {
        let policy = match &self.policy {
            Some(p) => Some(load_policy(p, self.window, self.keep_recent)?),
            None => None,
        };
        let rules = match &self.rules {
            Some(path) => Some(Rules::load(path).map_err(|source| CliError::Rules {
                path: path.clone(),
                source,
            })?),
            None => None,
        };
        Ok((policy, rules))
    }

    /// How journals are read: with the seal key of `--seal-key-file`, if given.
    ///
    /// # Errors
    ///
    /// [`AuditError::Io`] for a key file that cannot be read, [`AuditError::SealKey`]
    /// for one too short to be a key.
    pub fn journal_options(&self) -> Result<OpenOptions, AuditError> {
        let Some(file) = &self.seal_key_file else {
            return Ok(OpenOptions::new());
        };
        let bytes = std::fs::read(file).map_err(|source| AuditError::Io {
            file: file.clone(),
            source,
        })?;
        let key = SealKey::new(bytes).map_err(|source| AuditError::SealKey {
            file: file.clone(),
            source,
        })?;
        Ok(OpenOptions::new().seal_key(key))
    }
}

/// What a file holds, as far as the audit is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A journal (`JournaledHistory`'s file).
    Journal,
    /// A saved history (`History::to_json`).
    History,
    /// A transcript to replay.
    Transcript,
}

/// A journal's first line is `{"journal": ...}` (sealed: `{"sealed":["<mac>",{"journal":
/// ...}]}`); a saved history is an object with `entries`; anything else is a transcript.
///
/// # Errors
///
/// [`AuditError::Io`] if the file cannot be read.
pub fn kind_of(file: &Path) -> Result<Kind, AuditError> {
    let io = |source| AuditError::Io {
        file: file.to_owned(),
        source,
    };
    let mut reader = BufReader::new(std::fs::File::open(file).map_err(io)?);
    let mut first = String::new();
    reader.read_line(&mut first).map_err(io)?;
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(first.trim())
        && (map.contains_key("journal") || sealed_header(&map))
    {
        return Ok(Kind::Journal);
    }
    let text = std::fs::read_to_string(file).map_err(io)?;
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) if v.get("entries").is_some_and(serde_json::Value::is_array) => Ok(Kind::History),
        _ => Ok(Kind::Transcript),
    }
}

/// Whether a first line's object is a sealed journal header: `{"sealed":["<mac>",{"journal":...}]}`.
fn sealed_header(map: &serde_json::Map<String, serde_json::Value>) -> bool {
    map.get("sealed")
        .and_then(serde_json::Value::as_array)
        .and_then(|pair| pair.get(1))
        .is_some_and(|inner| inner.get("journal").is_some())
}

/// The policy under test, observed by a ledger before and after each compaction.
struct Audited<'a> {
    inner: PolicyStrategy,
    ledger: Ledger,
    answers: &'a [Option<ToolCall>],
    ids: Vec<EntryId>,
    noted: usize,
    last: Option<History>,
}

impl Audited<'_> {
    /// Observes what is new, and tells the ledger which call each new result answers
    /// (a plain-chat agent's commands are not tool-call parts).
    fn catch_up(&mut self, history: &History) {
        self.ledger.observe(history);
        for i in self.noted..self.ids.len() {
            if let Some(Some(call)) = self.answers.get(i) {
                self.ledger
                    .note_call(self.ids[i], &call.name, &call.arguments);
            }
        }
        self.noted = self.ids.len();
    }
}

impl Strategy for Audited<'_> {
    fn label(&self) -> String {
        self.inner.label()
    }
    fn before_request(&mut self, history: &mut History) -> Result<Before, ReplayError> {
        self.catch_up(history);
        let before = self.inner.before_request(history)?;
        self.ledger.observe(history);
        Ok(before)
    }
    fn thresholds(&self) -> Vec<f64> {
        self.inner.thresholds()
    }
    fn observe(&mut self, id: EntryId, is_result: bool) {
        self.inner.observe(id, is_result);
        self.ids.push(id);
    }
    fn finish(&mut self, history: &History) {
        self.catch_up(history);
        self.last = Some(history.clone());
    }
}

/// Replays one transcript under `policy` with a ledger watching, and records the
/// replay's lost references as regret events. Returns the ledger, the replay's evidence
/// and the history as the replay left it.
pub fn audit_transcript(
    prepared: &Prepared,
    policy: &Policy,
) -> Result<(Ledger, Summary, History), ReplayError> {
    let mut audited = Audited {
        inner: PolicyStrategy::new(policy.clone(), BuiltinSummarizer::default()),
        ledger: Ledger::new(),
        answers: &prepared.transcript().answers,
        ids: Vec::new(),
        noted: 0,
        last: None,
    };
    let run = replay(
        prepared,
        &mut audited,
        Some(&LibRenderer::default()),
        &mut |_, _| Ok(()),
    )?;
    let summary = Summary::of(&run, prepared);
    let Audited {
        mut ledger,
        ids,
        last,
        ..
    } = audited;
    for step in &run.steps {
        let refs = prepared.references(step.message);
        // One event per source an answer missed, naming every identifier it missed.
        let mut missed: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        for r in step
            .refs
            .iter()
            .filter(|r| !r.survived && r.fate != Fate::Verbatim)
        {
            if let Some(reference) = refs.get(r.reference) {
                missed
                    .entry(r.source)
                    .or_default()
                    .push(reference.identifier.clone());
            }
        }
        for (source, identifiers) in missed {
            if let (Some(src), Some(at)) = (ids.get(source), ids.get(step.message)) {
                ledger.record_lost_reference(*src, identifiers, *at);
            }
        }
    }
    let history = last.ok_or(ReplayError::Internal("the replay did not finish"))?;
    Ok((ledger, summary, history))
}

/// One file, loaded and observed.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Its ledger.
    pub ledger: Ledger,
    /// Its history (for a transcript, as the replay left it).
    pub history: History,
    /// For a transcript, the replay's evidence.
    pub evidence: Option<Summary>,
    /// What the figures cannot tell, if anything (a saved history's compactions of
    /// unknown order).
    pub note: Option<String>,
}

/// Loads `file` (see [`kind_of`]) and observes it with a ledger. A journal is read with
/// `journal` (its seal key, if any); a transcript is replayed under `policy` with `rules`,
/// which it needs.
///
/// # Errors
///
/// An unreadable or invalid file, a transcript without rules or policy, a failed replay.
pub fn load_audited(
    file: &Path,
    rules: Option<&Rules>,
    policy: Option<&Policy>,
    format: Option<InputFormat>,
    journal: &OpenOptions,
) -> Result<Loaded, AuditError> {
    let io = |source| AuditError::Io {
        file: file.to_owned(),
        source,
    };
    match kind_of(file)? {
        Kind::Journal => {
            let reader = std::fs::File::open(file).map_err(io)?;
            let (ledger, history, _) =
                Ledger::of_journal_with(reader, journal).map_err(|source| AuditError::Journal {
                    file: file.to_owned(),
                    source,
                })?;
            Ok(Loaded {
                ledger,
                history,
                evidence: None,
                note: None,
            })
        }
        Kind::History => {
            let text = std::fs::read_to_string(file).map_err(io)?;
            let history = History::from_json(&text).map_err(|source| AuditError::History {
                file: file.to_owned(),
                source,
            })?;
            let unordered = history
                .compactions()
                .iter()
                .filter(|c| !c.edits.iter().any(|e| matches!(e, Edit::Summarize { .. })))
                .count();
            let note = (unordered > 0).then(|| {
                format!(
                    "{}: {unordered} of its {} compactions wrote no summary, and a saved history does not record when they happened; they are placed as late as its records allow, so regrets after them may be missed (audit the agent's journal for the exact order)",
                    file.display(),
                    history.compactions().len()
                )
            });
            Ok(Loaded {
                ledger: Ledger::of(&history),
                history,
                evidence: None,
                note,
            })
        }
        Kind::Transcript => {
            let (Some(rules), Some(policy)) = (rules, policy) else {
                return Err(AuditError::NeedsRules {
                    file: file.to_owned(),
                });
            };
            let t = load(file, format.map(Format::from), rules)?;
            let (ledger, summary, history) = audit_transcript(&Prepared::new(t), policy)?;
            Ok(Loaded {
                ledger,
                history,
                evidence: Some(summary),
                note: None,
            })
        }
    }
}

#[cfg(test)]
mod tests;
