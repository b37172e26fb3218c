//! [`Renderer`]: requests rendered incrementally, each settled item once.
//!
//! Between two compactions a view only grows: new entries are pushed at its end. The
//! rendered form of the items before the last point where no tool call was open cannot
//! change any more (a result only answers a call made before it, and the first turn note
//! is decided once something is sent), so a renderer keeps what it rendered up to that
//! point and renders only what follows. A compaction changes the view from its first
//! edit on: the rendering is kept up to the last settled point before it. A new system
//! pin or another history starts it over from scratch.

use serde_json::Value;

use super::anthropic::{Mark, Turns};
use super::bytes::Body;
use super::neutral::{self, Segment};
use super::responses::{Items, ItemsMark};
use super::summaries::SummaryBlocks;
use super::{AnthropicRequest, anthropic, openai, responses};
use crate::history::History;
use crate::history::view::ViewItem;
use crate::model::entry::EntryId;
use crate::sent::Form;

/// What a rendering was made from: the history (a clone is another history), its
/// compactions and its pins. While it is unchanged, the view only grew at its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    history: u64,
    compactions: usize,
    pinned: usize,
}

impl Key {
    fn of(history: &History) -> Key {
        Key {
            history: history.instance(),
            compactions: history.compactions().len(),
            pinned: history.pinned().len(),
        }
    }
}

/// The view's segments after view item `from` (a resumed render), or all of them with
/// the first turn note placed (a render from the start).
fn segments_after<'h>(
    history: &'h History,
    from: Option<usize>,
    summaries: &'h SummaryBlocks,
) -> Vec<neutral::Segment<'h>> {
    match from {
        Some(item) => neutral::segments(history, item, false, summaries),
        None => neutral::segments(history, 0, true, summaries),
    }
}

/// The index in `ids` of the first call id that one of `items` holds a result for (what
/// its entry holds, or its capped form: the forms of a result keep its call id).
fn first_answered(history: &History, items: &[ViewItem], ids: &[String]) -> Option<usize> {
    if ids.is_empty() {
        return None;
    }
    // A set: a hostile view may leave many calls open and answer many at once.
    let mut results: foldhash::HashSet<&str> = foldhash::HashSet::default();
    for item in items {
        let message = match &item.form {
            Form::Capped(m) => m,
            _ => match history.entry(item.id) {
                Some(entry) => entry.message(),
                None => continue,
            },
        };
        results.extend(message.tool_results().map(|r| r.call_id.as_str()));
    }
    ids.iter().position(|id| results.contains(id.as_str()))
}

/// Where to resume: the view item after the last settled segment, and where the
/// output stood after it.
#[derive(Debug, Clone, Copy)]
struct Resume<M> {
    item: usize,
    at: M,
    /// How many of [`State::open`] are open there (none: no call is).
    open: usize,
}

/// One format's rendering and where to resume it.
#[derive(Debug)]
struct State<O, M> {
    key: Option<Key>,
    output: O,
    /// Every settled point of the rendering, in view order.
    resumes: Vec<Resume<M>>,
    /// The ids of the calls left open at the settled points since the last where none
    /// was, in the order they were left open: a point stays settled until a result
    /// comes for one of the first [`Resume::open`].
    open: Vec<String>,
    /// The view items rendered, by id and form: a compaction leaves the rendering of the
    /// items before the first one it changed as it was.
    rendered: Vec<(EntryId, Form)>,
}

impl<O: Default, M: Copy> State<O, M> {
    fn new() -> Self {
        State {
            key: None,
            output: O::default(),
            resumes: Vec::new(),
            open: Vec::new(),
            rendered: Vec::new(),
        }
    }

    /// The view item to render from and the mark to go back to (`None`: from scratch):
    /// the last settled point at or before the first item of `view` that is not as it was
    /// rendered. The view of the same history only grows between compactions; a
    /// compaction changes it from its first edit on; another history, or a new pin (the
    /// system prompt), starts over.
    ///
    /// A point where calls were left open is kept only while no item after it could
    /// answer one: in a view that only grew, none of the new items is a result for one
    /// of them; after a compaction, never. The view's summary blocks are brought up to
    /// date first.
    fn start(&mut self, history: &History, summaries: &mut SummaryBlocks) -> Option<Resume<M>> {
        summaries.update(history);
        let key = Key::of(history);
        let view = history.view().items();
        let same = self
            .key
            .is_some_and(|k| k.history == key.history && k.pinned == key.pinned);
        let unchanged = if !same {
            0
        } else if self.key == Some(key) {
            self.rendered.len().min(view.len())
        } else {
            self.rendered
                .iter()
                .zip(view)
                .take_while(|((id, form), item)| *id == item.id && *form == item.form)
                .count()
        };
        let grew = self.key == Some(key);
        let keep = self.resumes.partition_point(|r| r.item <= unchanged);
        self.resumes.truncate(keep);
        // The first open call a result may have come for: one among the items not
        // rendered yet in a view that only grew; any after a compaction.
        let answered = if grew {
            let new = view.get(self.rendered.len().min(view.len())..);
            first_answered(history, new.unwrap_or(&[]), &self.open)
        } else {
            Some(0)
        };
        if let Some(first) = answered {
            let keep = self.resumes.partition_point(|r| r.open <= first);
            self.resumes.truncate(keep);
        }
        self.key = Some(key);
        let resume = self.resumes.last().copied();
        self.open.truncate(resume.map_or(0, |r| r.open));
        self.rendered.truncate(resume.map_or(0, |r| r.item));
        resume
    }

    /// Renders `history`'s view from `resume` on (from the start without one), through
    /// `emit`, remembering where to resume after each settled segment (once the first
    /// turn note is decided) and the view items rendered.
    fn render<'h>(
        &mut self,
        history: &'h History,
        resume: Option<Resume<M>>,
        summaries: &'h SummaryBlocks,
        mut emit: impl FnMut(&mut O, Segment<'h>) -> M,
    ) {
        let segments = segments_after(history, resume.map(|r| r.item), summaries);
        let mut decided = resume.is_some();
        let view = history.view().items();
        let from = self.rendered.len();
        self.rendered.extend(
            view.iter()
                .skip(from)
                .map(|item| (item.id, item.form.clone())),
        );
        for mut segment in segments {
            decided |= segment.sends;
            let (item, settled) = (segment.end, segment.settled);
            // Calls left open stay open at every later point.
            self.open.append(&mut segment.open);
            let at = emit(&mut self.output, segment);
            if settled && decided {
                self.resumes.push(Resume {
                    item,
                    at,
                    open: self.open.len(),
                });
            }
        }
    }
}

/// Renders a history's requests incrementally: keep one across the requests of an agent
/// loop, and each request costs what is new since the last, not the whole view.
///
/// The output is byte for byte what [`render_openai`](super::render_openai),
/// [`render_anthropic`](super::render_anthropic) and
/// [`render_responses`](super::render_responses) give for the same history. What was
/// rendered is kept up to the last point where no tool call was open; only what follows
/// is rendered again. After a compaction, what was rendered is kept up to the last such
/// point before the first item the compaction changed (the prefix a provider's prompt
/// cache also keeps); a new pin or another history (a clone included) starts the
/// rendering over. One renderer keeps every format, each rendered only when asked for.
///
/// What a compaction takes off the rendering is kept, emptied, and the next messages are
/// built in it (their maps, keys and text buffers), so a request after a compaction
/// allocates little: at most 128 values of each kind, text buffers of at most 16 KiB.
///
/// ```
/// use favur_context::{fuzzy, strict, History};
/// use favur_context::render::{render_anthropic, render_openai, Renderer};
/// let mut h = History::new();
/// h.pin(strict!(system: "You are a coding agent."));
/// h.append(strict!(user: "List the files."));
/// let mut renderer = Renderer::new();
/// assert_eq!(renderer.openai(&h), &render_openai(&h));
/// h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// h.append(fuzzy!(tool_result("c1"): "Cargo.toml\nsrc"));
/// // Only the call and its result are rendered now.
/// assert_eq!(renderer.openai(&h), &render_openai(&h));
/// assert_eq!(renderer.anthropic(&h), &render_anthropic(&h));
/// ```
#[derive(Debug)]
pub struct Renderer {
    openai: State<(Value, openai::Spare), usize>,
    anthropic: State<(AnthropicRequest, Turns), Mark>,
    responses: State<(Value, Items), ItemsMark>,
    /// The view's summary blocks, written once for both formats.
    summaries: SummaryBlocks,
    /// The JSON bytes of each format's request, kept as its rendering is.
    bodies: Bodies,
}

/// The bytes of each format's last request ([`Renderer::openai_bytes`] and its kin).
#[derive(Debug, Default)]
struct Bodies {
    openai: Body,
    anthropic: Body,
    responses: Body,
}

impl Default for Renderer {
    fn default() -> Self {
        Renderer::new()
    }
}

impl Renderer {
    /// A renderer that has rendered nothing yet.
    ///
    /// ```
    /// use favur_context::History;
    /// let mut r = favur_context::render::Renderer::new();
    /// assert_eq!(r.openai(&History::new()), &serde_json::json!([]));
    /// ```
    pub fn new() -> Self {
        Renderer {
            openai: State {
                output: (Value::Array(Vec::new()), openai::Spare::default()),
                ..State::new()
            },
            anthropic: State::new(),
            responses: State::new(),
            summaries: SummaryBlocks::default(),
            bodies: Bodies::default(),
        }
    }

    /// The history's view as OpenAI Chat Completions `messages`, as
    /// [`render_openai`](super::render_openai) renders it, rendering only what changed
    /// since this renderer's last call for the same history.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// use favur_context::render::{render_openai, Renderer};
    /// let mut h = History::new();
    /// let mut r = Renderer::new();
    /// for i in 0..3 {
    ///     h.append(fuzzy!(user: "step {i}"));
    ///     assert_eq!(r.openai(&h), &render_openai(&h));
    /// }
    /// assert_eq!(r.openai(&h)[2]["content"], "step 2");
    /// ```
    pub fn openai(&mut self, history: &History) -> &Value {
        let state = &mut self.openai;
        let resume = state.start(history, &mut self.summaries);
        let (output, spare) = &mut state.output;
        let mut messages = match std::mem::take(output) {
            Value::Array(messages) => messages,
            _ => Vec::new(),
        };
        let keep = resume.map_or(0, |r| r.at).min(messages.len());
        self.bodies.openai.keep(keep);
        for message in messages.drain(keep..) {
            spare.retire(message);
        }
        if resume.is_none() {
            messages.extend(
                neutral::system_pins(history)
                    .into_iter()
                    .map(|(entry, text)| openai::system_message(entry, text)),
            );
        }
        *output = Value::Array(messages);
        state.render(
            history,
            resume,
            &self.summaries,
            |(output, spare), segment| {
                let Value::Array(messages) = output else {
                    return 0;
                };
                messages.extend(segment.out.into_iter().map(|out| spare.message(out)));
                messages.len()
            },
        );
        &state.output.0
    }

    /// The history's view as an Anthropic Messages request, as
    /// [`render_anthropic`](super::render_anthropic) renders it, rendering only what
    /// changed since this renderer's last call for the same history.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// use favur_context::render::{render_anthropic, Renderer};
    /// let mut h = History::new();
    /// let mut r = Renderer::new();
    /// h.append(fuzzy!(assistant: "I was asked to look around."));
    /// assert_eq!(r.anthropic(&h), &render_anthropic(&h));
    /// h.append(fuzzy!(user: "go on"));
    /// assert_eq!(r.anthropic(&h), &render_anthropic(&h));
    /// assert_eq!(r.anthropic(&h).messages.len(), 3);
    /// ```
    pub fn anthropic(&mut self, history: &History) -> &AnthropicRequest {
        let state = &mut self.anthropic;
        let resume = state.start(history, &mut self.summaries);
        let (request, turns) = &mut state.output;
        turns.messages = std::mem::take(&mut request.messages);
        // The last turn at a mark may still grow: the turns before it are as they were.
        self.bodies
            .anthropic
            .keep(resume.map_or(0, |r| r.at.turns().saturating_sub(1)));
        match resume {
            Some(r) => {
                turns.reset(r.at);
            }
            None => {
                request.system = neutral::system_pins(history)
                    .into_iter()
                    .map(|(entry, text)| anthropic::system_block(entry, text))
                    .collect();
                turns.restart();
            }
        }
        state.render(history, resume, &self.summaries, |(_, turns), segment| {
            for out in segment.out {
                turns.push(out);
            }
            turns.mark()
        });
        let (request, turns) = &mut state.output;
        if resume.is_none() && turns.finish() {
            // Every mark of a render from the start is taken before the note went first.
            for r in &mut state.resumes {
                r.at = r.at.after_note();
            }
        }
        request.messages = std::mem::take(&mut turns.messages);
        &state.output.0
    }

    /// The history's view as an OpenAI Responses request body, as
    /// [`render_responses`](super::render_responses) renders it, rendering only what
    /// changed since this renderer's last call for the same history.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// use favur_context::render::{render_responses, Renderer};
    /// let mut h = History::new();
    /// let mut r = Renderer::new();
    /// h.append(fuzzy!(user: "hi"));
    /// assert_eq!(r.responses(&h), &render_responses(&h));
    /// h.append(fuzzy!(assistant: "hello"));
    /// assert_eq!(r.responses(&h), &render_responses(&h));
    /// assert_eq!(r.responses(&h)["input"][1]["role"], "assistant");
    /// ```
    pub fn responses(&mut self, history: &History) -> &Value {
        let state = &mut self.responses;
        let resume = state.start(history, &mut self.summaries);
        let (body, items) = &mut state.output;
        items.input = match body.get_mut("input") {
            Some(Value::Array(input)) => std::mem::take(input),
            _ => Vec::new(),
        };
        self.bodies
            .responses
            .keep(resume.map_or(0, |r| r.at.items()));
        match resume {
            Some(r) => {
                items.reset(r.at);
            }
            None => {
                *items = Items::default();
                items.input.extend(
                    neutral::system_pins(history)
                        .into_iter()
                        .map(|(entry, text)| responses::system_message(entry, text)),
                );
            }
        }
        state.render(history, resume, &self.summaries, |(_, items), segment| {
            for out in segment.out {
                items.push(out);
            }
            items.mark()
        });
        let (body, items) = &mut state.output;
        *body = responses::body(std::mem::take(&mut items.input));
        &state.output.0
    }
    /// The JSON bytes of [`openai`](Renderer::openai)'s `messages` array: byte for byte
    /// `serde_json::to_vec(&render_openai(history))`, serializing only the messages
    /// rendered since the last call (the messages before the last settled point keep
    /// the bytes written for them). Splice it into the body you send:
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History};
    /// use favur_context::render::{render_openai, Renderer};
    /// let mut h = History::new();
    /// h.pin(strict!(system: "You are a coding agent."));
    /// let mut r = Renderer::new();
    /// for i in 0..3 {
    ///     h.append(fuzzy!(user: "step {i}"));
    ///     assert_eq!(r.openai_bytes(&h), serde_json::to_vec(&render_openai(&h))?);
    /// }
    /// let mut body = br#"{"model":"gpt-4o","messages":"#.to_vec();
    /// body.extend_from_slice(r.openai_bytes(&h));
    /// body.push(b'}');
    /// let sent: serde_json::Value = serde_json::from_slice(&body)?;
    /// assert_eq!(sent["messages"][3]["content"], "step 2");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn openai_bytes(&mut self, history: &History) -> &[u8] {
        self.openai(history);
        let Value::Array(messages) = &self.openai.output.0 else {
            return b"[]";
        };
        self.bodies.openai.write(|b| b.push(b'['), messages, b"]")
    }

    /// The JSON bytes of [`anthropic`](Renderer::anthropic)'s request: byte for byte
    /// `serde_json::to_vec(&render_anthropic(history))` (`{"system":[…],"messages":[…]}`,
    /// `system` left out when nothing is pinned), serializing only the turns rendered
    /// since the last call. Add `model`, `max_tokens` and `tools` before its closing `}`.
    ///
    /// ```
    /// use favur_context::{fuzzy, strict, History};
    /// use favur_context::render::{render_anthropic, Renderer};
    /// let mut h = History::new();
    /// h.pin(strict!(system: "Be brief."));
    /// h.append(fuzzy!(user: "hi"));
    /// let mut r = Renderer::new();
    /// assert_eq!(r.anthropic_bytes(&h), serde_json::to_vec(&render_anthropic(&h))?);
    /// h.append(fuzzy!(assistant: "hello"));
    /// let bytes = r.anthropic_bytes(&h);
    /// assert!(bytes.starts_with(br#"{"system":[{"#));
    /// let mut body = bytes[..bytes.len() - 1].to_vec();
    /// body.extend_from_slice(br#","model":"claude-sonnet-4-5","max_tokens":1024}"#);
    /// let sent: serde_json::Value = serde_json::from_slice(&body)?;
    /// assert_eq!(sent["messages"][1]["role"], "assistant");
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn anthropic_bytes(&mut self, history: &History) -> &[u8] {
        self.anthropic(history);
        let request = &self.anthropic.output.0;
        let system = &request.system;
        self.bodies.anthropic.write(
            |b| {
                if system.is_empty() {
                    b.extend_from_slice(b"{\"messages\":[");
                } else {
                    b.extend_from_slice(b"{\"system\":");
                    // Writing a `Value` into a `Vec` cannot fail.
                    let _ = serde_json::to_writer(&mut *b, system);
                    b.extend_from_slice(b",\"messages\":[");
                }
            },
            &request.messages,
            b"]}",
        )
    }

    /// The JSON bytes of [`responses`](Renderer::responses)'s body: byte for byte
    /// `serde_json::to_vec(&render_responses(history))` (`{"input":[…]}`), serializing
    /// only the items rendered since the last call. Add `model` and `tools` before its
    /// closing `}`.
    ///
    /// ```
    /// use favur_context::{fuzzy, History};
    /// use favur_context::render::{render_responses, Renderer};
    /// let mut h = History::new();
    /// let mut r = Renderer::new();
    /// h.append(fuzzy!(user: "hi"));
    /// let sent: serde_json::Value = serde_json::from_slice(r.responses_bytes(&h))?;
    /// assert_eq!(sent["input"][0]["content"][0]["text"], "hi");
    /// h.append(fuzzy!(assistant: "hello"));
    /// assert_eq!(r.responses_bytes(&h), serde_json::to_vec(&render_responses(&h))?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn responses_bytes(&mut self, history: &History) -> &[u8] {
        self.responses(history);
        let input = match self.responses.output.0.get("input") {
            Some(Value::Array(input)) => input.as_slice(),
            _ => &[],
        };
        self.bodies
            .responses
            .write(|b| b.extend_from_slice(b"{\"input\":["), input, b"]}")
    }
}
