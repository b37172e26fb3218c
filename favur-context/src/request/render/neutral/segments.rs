//! The view cut into segments that pair on their own, for a renderer that resumes (the
//! cached renders): [`segments`] and where the run after the last settled point can be
//! cut ([`soft_cut`]).

use super::{Item, Out, id_of, needs_note, note, pair, push_item, sends};
use crate::history::History;
use crate::request::render::summaries::SummaryBlocks;
use crate::sent;

/// A run of the view rendered on its own: the pairing never crosses its end when it is
/// `settled` (every call made before it is answered before it, or, with `open`, every
/// call left open is answered by nothing after it yet).
pub(in crate::request::render) struct Segment<'h> {
    /// The index of the view item after its last.
    pub(in crate::request::render) end: usize,
    /// Whether what follows cannot change it: no call is open at its end, or the calls
    /// in `open` are, and it stays as it is until a result for one of them comes.
    pub(in crate::request::render) settled: bool,
    /// The ids of the calls left open at its end when it is settled with calls open.
    pub(in crate::request::render) open: Vec<String>,
    /// Whether it sends something of the view's own (the first turn note aside): once a
    /// segment has, whether the note goes first is decided.
    pub(in crate::request::render) sends: bool,
    /// Its neutral sequence, pairing repaired.
    pub(in crate::request::render) out: Vec<Out<'h>>,
}

/// A call made in the run of the view since the last point where no call was open.
struct RunCall {
    /// The index in the run's items of the message that makes it, and its index there.
    item: usize,
    call: usize,
    /// The view item that makes it.
    at: usize,
    answered: bool,
}

/// The view from item `from` on, cut into segments after every item where no call is
/// open, each paired on its own; with `note` (a render from the start), the first turn
/// note is put first where [`neutral`] puts it. Pairing them one by one gives the
/// sequence [`neutral`] gives: a result only answers a call made before it, so the
/// pairing never crosses a point where no call is open.
///
/// The run after the last such point is cut once more, at the last point after which
/// no result answers a call made before it (see [`soft_cut`]): pairing the two parts
/// on their own gives what pairing the run does, and the first part stays so until a
/// result comes for a call it leaves open.
pub(in crate::request::render) fn segments<'h>(
    history: &'h History,
    from: usize,
    note_first: bool,
    blocks: &'h SummaryBlocks,
) -> Vec<Segment<'h>> {
    let view = history.view().items();
    // Sized for the items rendered (each view item is one or two items, most often).
    let rendered = view.len().saturating_sub(from);
    let mut out = Vec::with_capacity(rendered.min(64));
    let mut items: Vec<Item<'_>> = Vec::with_capacity(rendered.min(64) * 2);
    // The calls of the run, and for each of its view items where its items start.
    let mut run: Vec<RunCall> = Vec::new();
    let mut starts: Vec<usize> = Vec::with_capacity(rendered.min(64));
    // The answered calls of the run: (view item of the call, of its result).
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut open: sent::Matcher<'h, usize> = sent::Matcher::default();
    let mut open_calls = 0usize;
    // Each message's calls are one group of the matcher (as `pair` numbers them).
    let mut group = 0u64;
    for (i, item) in view.iter().enumerate().skip(from) {
        let at = items.len();
        starts.push(at);
        push_item(&mut items, history, item, Some(blocks));
        for (k, it) in items.iter().enumerate().skip(at) {
            match it {
                Item::Msg { calls, .. } => {
                    group += 1;
                    for (c, call) in calls.iter().enumerate() {
                        open.call(id_of(call), group, run.len());
                        run.push(RunCall {
                            item: k,
                            call: c,
                            at: i,
                            answered: false,
                        });
                        open_calls += 1;
                    }
                }
                Item::Res { call_id, .. } => {
                    if let Some(r) = open.answer(call_id) {
                        open_calls -= 1;
                        if let Some(call) = run.get_mut(r) {
                            call.answered = true;
                            spans.push((call.at, i));
                        }
                    }
                }
            }
        }
        if open_calls == 0 && !items.is_empty() {
            out.push(Segment::new(i + 1, true, pair(history, &mut items)));
            run.clear();
            starts.clear();
            spans.clear();
        }
    }
    if !items.is_empty() {
        last_run(history, items, &run, &starts, &spans, view.len(), &mut out);
    }
    if note_first && needs_note(out.iter().flat_map(|s| s.out.iter()), view.is_empty()) {
        match out.first_mut() {
            Some(first) => first.out.insert(0, note()),
            None => out.push(Segment::new(0, false, vec![note()])),
        }
    }
    out
}

/// The run after the last point where no call was open (view items up to `end`, its
/// `items`, `run` calls, `starts` and answered `spans` as [`soft_cut`] takes them): cut
/// once more where it can be, the part after the cut not settled.
fn last_run<'h>(
    history: &'h History,
    mut items: Vec<Item<'h>>,
    run: &[RunCall],
    starts: &[usize],
    spans: &[(usize, usize)],
    end: usize,
    out: &mut Vec<Segment<'h>>,
) {
    let start = end - starts.len();
    match soft_cut(history, &items, run, starts, spans, start, end) {
        Some((cut, ids)) => {
            let mut rest = items.split_off(starts.get(cut - start).copied().unwrap_or(items.len()));
            let mut first = Segment::new(cut, true, pair(history, &mut items));
            first.open = ids;
            out.push(first);
            if !rest.is_empty() {
                out.push(Segment::new(end, false, pair(history, &mut rest)));
            }
        }
        None => out.push(Segment::new(end, false, pair(history, &mut items))),
    }
}

/// Where the run of view items `start..end` (where some call is open throughout; its
/// `items`, the view item each of its calls is made by, where each view item's items
/// start, and the answered calls as (call, result) view items) can be cut, and the ids
/// of the calls open there: the last point after which no result answers a call made
/// before it, if its first part sends none of its calls as still in flight (`pair`
/// leaves out the unanswered calls of the last message, which the whole run sends as
/// missing). Pairing the two parts on their own gives what pairing the run does.
fn soft_cut(
    history: &History,
    items: &[Item<'_>],
    run: &[RunCall],
    starts: &[usize],
    spans: &[(usize, usize)],
    start: usize,
    end: usize,
) -> Option<(usize, Vec<String>)> {
    // Cut `k` (the first part is the view items before `k`) is blocked by a call made
    // before it and answered at or after it.
    let mut blocked = vec![0i64; end - start + 2];
    for &(call, result) in spans {
        if let (Some(lo), Some(hi)) = (call.checked_sub(start), result.checked_sub(start)) {
            if let Some(b) = blocked.get_mut(lo + 1) {
                *b += 1;
            }
            if let Some(b) = blocked.get_mut(hi + 1) {
                *b -= 1;
            }
        }
    }
    let mut depth = 0i64;
    let mut cut = None;
    for (k, b) in blocked.iter().enumerate().take(end - start + 1) {
        depth += b;
        if k > 0 && depth == 0 {
            cut = Some(k);
        }
    }
    let k = cut?;
    let split = starts.get(k).copied().unwrap_or(items.len());
    let first = items.get(..split).filter(|f| !f.is_empty())?;
    // The calls of the first part's last message: those unanswered with no result later
    // in the history would be left out as in flight. (If a result that answers no call
    // follows it, that result is the part's last message and nothing is left out: not
    // cutting then is only cautious.)
    let last = first
        .iter()
        .enumerate()
        .rev()
        .find(|(_, it)| matches!(it, Item::Msg { .. }));
    if let Some((at, Item::Msg { calls, entry, .. })) = last {
        for call in run.iter().filter(|c| c.item == at && !c.answered) {
            let Some(c) = calls.get(call.call) else {
                continue;
            };
            let later = history.result_entries(&c.id).iter().any(|r| r > entry);
            if !later {
                return None;
            }
        }
    }
    let ids = run
        .iter()
        .filter(|c| c.at < start + k && !c.answered)
        .filter_map(|c| match items.get(c.item) {
            Some(Item::Msg { calls, .. }) => calls.get(c.call).map(|call| call.id.to_string()),
            _ => None,
        })
        .collect();
    Some((start + k, ids))
}

impl<'h> Segment<'h> {
    fn new(end: usize, settled: bool, out: Vec<Out<'h>>) -> Self {
        let sends = out.iter().any(sends);
        Segment {
            end,
            settled,
            open: Vec::new(),
            sends,
            out,
        }
    }
}
