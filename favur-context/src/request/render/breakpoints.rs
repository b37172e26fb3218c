//! Prompt-cache placement: where the stable prefix of a rendered Anthropic request ends,
//! and `cache_control` breakpoints placed there.
//!
//! Between two compactions a view only grows at its end, and the rendering of every item
//! before the last point where no tool call is open cannot change any more (what
//! [`Renderer`](super::Renderer) relies on): the next request repeats those blocks byte
//! for byte. That is the stable prefix. Pinned system entries (the `system` blocks) and a
//! leading run of pinned entries and summaries are stable across compactions too.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::AnthropicRequest;
use super::anthropic::{self, Turns};
use super::anthropic_blocks::is_thinking;
use super::neutral;
use crate::history::History;
use crate::request::validate::MAX_CACHE_BREAKPOINTS;

/// A content block of a rendered Anthropic request.
///
/// ```
/// use favur_context::render::BlockAt;
/// assert!(BlockAt::System(0) < BlockAt::Message { message: 0, block: 0 });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockAt {
    /// The `system` block at this index.
    System(usize),
    /// Block `block` of the `content` of message `message`.
    Message {
        /// The message's index in `messages`.
        message: usize,
        /// The block's index in its `content`.
        block: usize,
    },
}

/// Where a request's stable prefix ends and where its breakpoints are (see
/// [`render_anthropic_cached`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CachePlacement {
    /// The last block of the stable prefix: what the next request repeats byte for byte
    /// unless a compaction or a new pin comes first (`None`: nothing is).
    pub stable_end: Option<BlockAt>,
    /// The blocks given a `{"type": "ephemeral"}` breakpoint, in request order.
    pub breakpoints: Vec<BlockAt>,
    /// Breakpoints the request already had (entries' `cache_control` extensions), which
    /// count towards the limit.
    pub existing: usize,
}

/// The last block of the turns as they stand, skipping blocks that cannot carry a
/// breakpoint (thinking blocks). The last turn is left out when it is the assistant's:
/// the next assistant message merges into it and may put thinking blocks before its
/// blocks.
fn last_block(turns: &Turns) -> Option<BlockAt> {
    let mut messages = turns.messages.iter().enumerate().rev();
    if turns
        .messages
        .last()
        .is_some_and(|t| t.get("role").and_then(Value::as_str) == Some("assistant"))
    {
        messages.next();
    }
    for (m, turn) in messages {
        let Some(blocks) = turn.get("content").and_then(Value::as_array) else {
            continue;
        };
        if let Some(b) = blocks.iter().rposition(|b| !is_thinking(b)) {
            return Some(BlockAt::Message {
                message: m,
                block: b,
            });
        }
    }
    None
}

fn block_mut(request: &mut AnthropicRequest, at: BlockAt) -> Option<&mut Value> {
    match at {
        BlockAt::System(i) => request.system.get_mut(i),
        BlockAt::Message { message, block } => request
            .messages
            .get_mut(message)?
            .get_mut("content")?
            .get_mut(block),
    }
}

fn count_existing(request: &AnthropicRequest) -> usize {
    fn count(blocks: &[Value]) -> usize {
        blocks
            .iter()
            .map(|b| {
                usize::from(b.get("cache_control").is_some())
                    + b.get("content")
                        .and_then(Value::as_array)
                        .map_or(0, |inner| count(inner))
            })
            .sum()
    }
    count(&request.system)
        + request
            .messages
            .iter()
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .map(|b| count(b))
            .sum::<usize>()
}

/// Renders the view as an Anthropic request (exactly as
/// [`render_anthropic`](super::render_anthropic) does) and places prompt-cache
/// breakpoints (`"cache_control": {"type": "ephemeral"}`) where its prefix is stable,
/// never more than [`MAX_CACHE_BREAKPOINTS`] in all (the entries' own `cache_control`
/// extensions count).
///
/// The candidates, in the order they are given a breakpoint while any is left: the end of
/// the stable prefix (the last block of the last settled point: the next request repeats
/// everything up to it); the last `system` block (the pinned system entries); the end of
/// the leading run of pinned entries and summaries (settled, and kept by the next
/// compactions); the settled point before the last one (a fallback should the last not
/// be cached: Anthropic looks for a cached prefix up to 20 blocks before a breakpoint).
/// The last turn is never the end of the stable prefix when it is the assistant's (the
/// next message may merge into it), nor is a thinking block (it cannot carry one).
///
/// ```
/// use favur_context::{fuzzy, strict, History};
/// use favur_context::render::{render_anthropic_cached, BlockAt};
/// use favur_context::render::validate::validate_anthropic_strict;
/// let mut h = History::new();
/// h.pin(strict!(system: "You are a coding agent."));
/// h.append(strict!(user: "List the files."));
/// h.append(fuzzy!(tool_call: "c1", "bash", serde_json::json!({"command": "ls"})));
/// h.append(fuzzy!(tool_result("c1"): "Cargo.toml\nsrc"));
/// let (request, placement) = render_anthropic_cached(&h);
/// assert_eq!(placement.stable_end, Some(BlockAt::Message { message: 2, block: 0 }));
/// assert_eq!(placement.breakpoints, [BlockAt::System(0), BlockAt::Message { message: 0, block: 0 }, BlockAt::Message { message: 2, block: 0 }]);
/// assert_eq!(request.messages[2]["content"][0]["cache_control"]["type"], "ephemeral");
/// validate_anthropic_strict(&request.to_value()).unwrap();
/// ```
pub fn render_anthropic_cached(history: &History) -> (AnthropicRequest, CachePlacement) {
    let durable = durable_items(history);
    let mut turns = Turns::default();
    // The stable points after each settled segment, and the durable one.
    let mut points: Vec<BlockAt> = Vec::new();
    let mut durable_point = None;
    let blocks = super::summaries::SummaryBlocks::default();
    for segment in neutral::segments(history, 0, true, &blocks) {
        let (end, settled) = (segment.end, segment.settled);
        for out in segment.out {
            turns.push(out);
        }
        if settled && let Some(at) = last_block(&turns) {
            if points.last() != Some(&at) {
                points.push(at);
            }
            if end <= durable {
                durable_point = Some(at);
            }
        }
    }
    let shift = turns.finish();
    let shift_at = |at: BlockAt| match at {
        BlockAt::Message { message, block } if shift => BlockAt::Message {
            message: message + 1,
            block,
        },
        other => other,
    };
    let system = neutral::system_pins(history)
        .into_iter()
        .map(|(entry, text)| anthropic::system_block(entry, text))
        .collect::<Vec<_>>();
    let mut request = AnthropicRequest {
        system,
        messages: std::mem::take(&mut turns.messages),
    };
    let stable_end = points.last().copied().map(shift_at);
    let candidates = [
        stable_end,
        request.system.len().checked_sub(1).map(BlockAt::System),
        durable_point.map(shift_at),
        points.len().checked_sub(2).map(|i| shift_at(points[i])),
    ];
    let existing = count_existing(&request);
    let mut breakpoints = place(&mut request, candidates, existing);
    breakpoints.sort();
    (
        request,
        CachePlacement {
            stable_end,
            breakpoints,
            existing,
        },
    )
}

/// How many leading view items are pinned entries or summaries (settled, and kept by the
/// next compactions).
fn durable_items(history: &History) -> usize {
    let pinned: HashSet<_> = history.pinned().iter().copied().collect();
    history
        .view()
        .items()
        .iter()
        .take_while(|item| {
            pinned.contains(&item.id)
                || history
                    .entry(item.id)
                    .is_some_and(|e| e.kind().is_summary())
        })
        .count()
}

/// Puts a breakpoint on each candidate block in order while any is left (`existing` are
/// the entries' own): never twice on one block, nor on one that has one or on an empty
/// text. The breakpoints placed.
fn place(
    request: &mut AnthropicRequest,
    candidates: [Option<BlockAt>; 4],
    existing: usize,
) -> Vec<BlockAt> {
    let mut left = MAX_CACHE_BREAKPOINTS.saturating_sub(existing);
    let mut breakpoints = Vec::new();
    for at in candidates.into_iter().flatten() {
        if left == 0 {
            break;
        }
        if breakpoints.contains(&at) {
            continue;
        }
        let Some(Value::Object(block)) = block_mut(request, at) else {
            continue;
        };
        if block.contains_key("cache_control")
            || block.get("text").and_then(Value::as_str) == Some("")
        {
            continue;
        }
        block.insert("cache_control".into(), json!({"type": "ephemeral"}));
        breakpoints.push(at);
        left -= 1;
    }
    breakpoints
}
