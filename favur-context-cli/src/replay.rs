//! The replay driver: a transcript re-run step by step as a live agent would have run it.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use favur_context::import::rules::RuleRef;
use favur_context::message::EntryKind;
use favur_context::render::Form;
use favur_context::{EntryId, History, Message, Retention};
use serde_json::Value;

use crate::ReplayError;
use crate::blocks::{BlockInfo, Blocks, reuse_share};
pub use crate::fate::Fate;
use crate::idents::{identifiers, presence_keys};
use crate::spans::{Span, SpanOutcome, find_spans};
use crate::strategy::{Before, Event, Strategy};
use crate::transcript::{ClassifiedTranscript, is_answer};

/// Turns the history into the request the model would receive.
pub trait Renderer {
    /// The request for the current view: a JSON array of messages, or an object with a
    /// `messages` array (and optionally a `system` value, which counts as the first block).
    fn render(&self, history: &History) -> Result<Value, ReplayError>;
}

/// A reference: an identifier an assistant message uses that first appeared in an
/// earlier tool output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The identifier.
    pub identifier: String,
    /// The index (in the transcript) of the tool output where it first appeared.
    pub source: usize,
}

/// A classified transcript with its references worked out once, ready to be replayed
/// under any number of strategies.
#[derive(Debug, Clone)]
pub struct Prepared {
    transcript: ClassifiedTranscript,
    references: Vec<Vec<Reference>>,
    referenced_later: Vec<bool>,
    spans: Vec<Vec<Span>>,
}

/// Text of a message as identifiers are read from it: its text, the command or arguments
/// of its tool calls, and the content of its tool results.
fn message_text(m: &Message) -> String {
    let mut out = m.text();
    for call in m.tool_calls() {
        out.push('\n');
        out.push_str(&favur_context::import::rules::command_of(&call.arguments));
    }
    for r in m.tool_results() {
        out.push('\n');
        out.push_str(&r.content);
    }
    out
}

impl Prepared {
    /// Works out the references of every assistant message.
    ///
    /// See [`Prepared`] for an example.
    pub fn new(transcript: ClassifiedTranscript) -> Self {
        let mut first: HashMap<String, usize> = HashMap::new();
        let n = transcript.messages.len();
        let mut references = vec![Vec::new(); n];
        let mut referenced_later = vec![false; n];
        for (i, imported) in transcript.messages.iter().enumerate() {
            let m = imported.classified.message();
            let text = message_text(m);
            let mut seen: HashSet<&str> = HashSet::new();
            for ident in identifiers(&text) {
                if !seen.insert(ident) {
                    continue;
                }
                if let Some(&src) = first.get(ident)
                    && is_answer(m)
                    && transcript.results.get(src).copied().unwrap_or(false)
                {
                    references[i].push(Reference {
                        identifier: ident.to_owned(),
                        source: src,
                    });
                    referenced_later[src] = true;
                }
            }
            // Only now does this message's text count as an appearance (with the parts of
            // its words, as presence in a request does).
            for ident in seen {
                for key in presence_keys(ident) {
                    if !first.contains_key(key) {
                        first.insert(key.to_owned(), i);
                    }
                }
            }
        }
        let spans = find_spans(&transcript, message_text);
        Prepared {
            transcript,
            references,
            referenced_later,
            spans,
        }
    }

    /// The transcript.
    ///
    /// See [`Prepared`] for an example.
    pub fn transcript(&self) -> &ClassifiedTranscript {
        &self.transcript
    }

    /// The references of message `index` (empty unless it is an assistant message).
    ///
    /// See [`Prepared`] for an example.
    pub fn references(&self, index: usize) -> &[Reference] {
        self.references.get(index).map_or(&[], Vec::as_slice)
    }

    /// The exact-text spans of message `index` (empty unless it is an assistant message;
    /// see [`spans`](crate::spans)).
    ///
    /// See [`Prepared`] for an example.
    pub fn spans(&self, index: usize) -> &[Span] {
        self.spans.get(index).map_or(&[], Vec::as_slice)
    }

    /// Whether any later assistant message references an identifier that first appeared
    /// in message `index`.
    ///
    /// See [`Prepared`] for an example.
    pub fn referenced_later(&self, index: usize) -> bool {
        self.referenced_later.get(index).copied().unwrap_or(false)
    }
}

/// What happened to one reference at one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefOutcome {
    /// Position of the reference in [`Prepared::references`] of the answering message.
    pub reference: usize,
    /// Transcript index of the tool output where the identifier first appeared.
    pub source: usize,
    /// Whether the identifier was present in the request.
    pub survived: bool,
    /// Where that tool output was in the request's view.
    pub fate: Fate,
}

/// One model request of a replay.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Step {
    /// Transcript index of the assistant message that answered this request.
    pub message: usize,
    /// Tokens of the request (the history's usage: pinned, view, framing).
    pub tokens: u64,
    /// Tokens of pinned entries.
    pub pinned: u64,
    /// View tokens by class (forgettable, fuzzy, strict), without framing.
    pub by_class: [u64; 3],
    /// Share of the request's tokens that is an unchanged prefix of the previous request.
    pub reuse: f64,
    /// Share of the request's tokens a prompt cache with Anthropic's rules covers, the
    /// breakpoints placed where the prefix is stable ([`PrefixCache`](crate::cached::PrefixCache)).
    pub cached: f64,
    /// What the strategy did before this request.
    pub event: Option<Event>,
    /// Whether the strategy refused the request (usage at its limit).
    pub refused: bool,
    /// What happened to each reference of the answering message.
    pub refs: Vec<RefOutcome>,
    /// What happened to each exact-text span of the answering message.
    pub spans: Vec<SpanOutcome>,
    /// The tokens of the rendered request, counted from the request itself
    /// ([`request_tokens`](favur_context::render::request_tokens)); 0 when not rendered.
    pub rendered: u64,
    /// Tool outputs shown verbatim whose command (the assistant turn that produced them)
    /// is not in the request.
    pub commandless: u64,
}

/// A whole replay of one transcript under one strategy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Run {
    /// The strategy's label.
    pub label: String,
    /// Tier thresholds as fractions of the window.
    pub thresholds: Vec<f64>,
    /// One record per request.
    pub steps: Vec<Step>,
}

impl Run {
    /// Mean request tokens (0 for no requests).
    pub fn mean_tokens(&self) -> f64 {
        if self.steps.is_empty() {
            0.0
        } else {
            self.steps.iter().map(|s| s.tokens as f64).sum::<f64>() / self.steps.len() as f64
        }
    }
}

/// What became of the references and the spans of message `i` in the request whose
/// blocks are `infos`.
fn outcomes(
    prepared: &Prepared,
    i: usize,
    history: &History,
    ids: &[Option<EntryId>],
    infos: &[Rc<BlockInfo>],
) -> (Vec<RefOutcome>, Vec<SpanOutcome>) {
    let (refs, spans) = (prepared.references(i), prepared.spans(i));
    if refs.is_empty() && spans.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let fates = fates(history);
    let fate_of = |source: usize| {
        ids.get(source)
            .copied()
            .flatten()
            .and_then(|id| fates.get(&id).copied())
            .unwrap_or(Fate::Dropped)
    };
    let ref_outcomes = refs
        .iter()
        .enumerate()
        .map(|(k, r)| RefOutcome {
            reference: k,
            source: r.source,
            survived: infos.iter().any(|b| b.idents.contains(&r.identifier)),
            fate: fate_of(r.source),
        })
        .collect();
    let span_outcomes = spans
        .iter()
        .enumerate()
        .map(|(k, s)| SpanOutcome {
            span: k,
            source: s.source,
            // Newest blocks first: a kept span is most often near the end.
            survived: infos.iter().rev().any(|b| s.found_in(&b.text)),
            fate: fate_of(s.source),
        })
        .collect();
    (ref_outcomes, span_outcomes)
}

/// Replays `prepared` under `strategy`.
///
/// Messages are appended in order as the import classified them (leading system messages
/// pinned); before each
/// assistant message the strategy runs, and, with a renderer, the request is rendered,
/// passed to `sink` with its step number, and measured: prefix reuse against the previous
/// request and which references it still carries. Without a renderer only the token
/// figures are recorded (used by the baselines' budget search).
pub fn replay(
    prepared: &Prepared,
    strategy: &mut dyn Strategy,
    renderer: Option<&dyn Renderer>,
    sink: &mut dyn FnMut(usize, &Value) -> Result<(), ReplayError>,
) -> Result<Run, ReplayError> {
    let t = &prepared.transcript;
    let mut history = History::new();
    let framing = u64::from(history.framing_tokens());
    let mut ids: Vec<Option<EntryId>> = vec![None; t.messages.len()];
    let mut run = Run {
        label: strategy.label(),
        thresholds: strategy.thresholds(),
        steps: Vec::new(),
    };
    let mut blocks = Blocks::default();
    let mut previous: Vec<u64> = Vec::new();
    let mut pinned_tokens = 0u64;
    let mut prefix_cache = crate::cached::PrefixCache::default();

    for (i, imported) in t.messages.iter().enumerate() {
        let message = imported.classified.message();
        if is_answer(message) {
            let step_no = run.steps.len();
            let Before { event, refused } = strategy.before_request(&mut history)?;
            let mut step = Step {
                message: i,
                tokens: history.usage_tokens(),
                pinned: pinned_tokens,
                event,
                refused,
                ..Step::default()
            };
            for item in history.view().items() {
                if let Ok(e) = history.recall(item.id) {
                    step.by_class[e.retention().index()] += u64::from(item.tokens);
                }
            }
            if let (Some(renderer), false) = (renderer, refused) {
                let request = renderer.render(&history)?;
                sink(step_no, &request)?;
                step.rendered = favur_context::render::request_tokens(
                    &request,
                    history.counter(),
                    history.framing_tokens(),
                );
                step.commandless = commandless(&history, &ids[..i], &t.results, &t.messages);
                let (keys, infos) = blocks.measure(&request, framing);
                step.reuse = reuse_share(&keys, &infos, &previous);
                previous = keys;
                step.cached = prefix_cache.measure(&history);
                (step.refs, step.spans) = outcomes(prepared, i, &history, &ids[..i], &infos);
            }
            run.steps.push(step);
        }
        let classified = imported.classified.clone();
        let id = if imported.pin {
            let id = history.pin(classified);
            pinned_tokens += history.recall(id).map_or(0, |e| u64::from(e.tokens()));
            id
        } else {
            history.append(classified)
        };
        strategy.observe(id, t.results.get(i).copied().unwrap_or(false));
        ids[i] = Some(id);
    }
    strategy.finish(&history);
    Ok(run)
}

/// Tool outputs (results and plain-chat observations) shown verbatim while the assistant
/// turn before them, which produced them, is not in the view. `ids` maps the transcript
/// messages recorded so far to their entries.
fn commandless(
    history: &History,
    ids: &[Option<EntryId>],
    results: &[bool],
    messages: &[favur_context::import::ImportedMessage],
) -> u64 {
    let shown: HashMap<EntryId, &Form> = history
        .view()
        .items()
        .iter()
        .map(|i| (i.id, &i.form))
        .collect();
    let mut producer: Option<EntryId> = None;
    let mut count = 0;
    for (k, id) in ids.iter().enumerate() {
        let Some(id) = *id else { continue };
        if messages[k].classified.message().role == favur_context::Role::Assistant {
            producer = Some(id);
            continue;
        }
        let verbatim = matches!(shown.get(&id), Some(Form::Verbatim | Form::Capped(_)));
        if results.get(k).copied().unwrap_or(false)
            && verbatim
            && producer.is_some_and(|p| !shown.contains_key(&p))
        {
            count += 1;
        }
    }
    count
}

/// Where each entry is in the current view.
fn fates(history: &History) -> HashMap<EntryId, Fate> {
    let mut out = HashMap::new();
    for item in history.view().items() {
        let fate = match item.form {
            Form::Verbatim | Form::Capped(_) | Form::CallsOnly | Form::Command => Fate::Verbatim,
            Form::Placeholder { summary: Some(_) } => Fate::Summarized,
            Form::Placeholder { summary: None } => Fate::Placeholder,
        };
        out.insert(item.id, fate);
        if let Ok(e) = history.recall(item.id)
            && let EntryKind::Summary { replaces } = e.kind()
        {
            for id in replaces {
                out.entry(*id).or_insert(Fate::Summarized);
            }
        }
    }
    out
}

/// The class of each transcript message, for breakdowns.
pub(crate) fn class_of(prepared: &Prepared, index: usize) -> Option<Retention> {
    prepared.transcript.decisions.get(index).map(|d| d.class)
}

/// The rule of each transcript message, for breakdowns.
pub(crate) fn rule_of(prepared: &Prepared, index: usize) -> Option<RuleRef> {
    prepared.transcript.decisions.get(index).map(|d| d.rule)
}

#[cfg(test)]
mod tests;
