//! The pairing rule both renderers follow ([`Matcher`]) and what rendering adds while
//! repairing it ([`Repairs`]), kept up to date as entries are recorded so that usage
//! counts it.

use std::borrow::Cow;
use std::collections::VecDeque;

use super::cost::count_block;
use super::marks::neutralize;
use super::texts::{missing_result, orphan_result, placeholder_text};
use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Message, Part, Role, ToolResult};
use crate::tokens::counter::TokenCounter;

/// The pairing rule both renderers follow: each result answers an unanswered call with
/// its id before it, of the most recent message that has one, and the calls of that
/// message in the order they were made (two calls of one message with one id are
/// answered first to first). `T` is whatever the caller tracks per call; `group` names
/// the message. O(1) per call and per result.
///
/// While few calls are open (as in almost every render and request) they are a short
/// list read from its end, which allocates once; past [`Matcher::FEW`] they move to a
/// map by id, for good.
#[derive(Debug, Clone)]
pub(crate) struct Matcher<'a, T> {
    open: Open<'a, T>,
}

/// The open calls of a [`Matcher`].
#[derive(Debug, Clone)]
enum Open<'a, T> {
    /// In the order they were made: (id, group, what the caller tracks).
    Few(Vec<(Cow<'a, str>, u64, T)>),
    /// By call id (borrowed where the calls outlive the matcher, as in a render; owned
    /// in the accounting, which outlives every entry it reads), a fast hasher; per id,
    /// its groups in the order they were made.
    Many(foldhash::HashMap<Cow<'a, str>, Vec<(u64, VecDeque<T>)>>),
}

impl<T> Default for Matcher<'_, T> {
    fn default() -> Self {
        Matcher {
            open: Open::Few(Vec::new()),
        }
    }
}

impl<'a, T> Matcher<'a, T> {
    /// How many open calls the list holds before they move to the map.
    const FEW: usize = 16;

    /// A call with `id` is made by message `group`.
    pub(crate) fn call(&mut self, id: Cow<'a, str>, group: u64, t: T) {
        if let Open::Few(few) = &mut self.open {
            if few.len() < Self::FEW {
                few.push((id, group, t));
                return;
            }
            let mut many = foldhash::HashMap::default();
            for (id, group, t) in few.drain(..) {
                Self::call_many(&mut many, id, group, t);
            }
            self.open = Open::Many(many);
        }
        if let Open::Many(many) = &mut self.open {
            Self::call_many(many, id, group, t);
        }
    }

    fn call_many(
        many: &mut foldhash::HashMap<Cow<'a, str>, Vec<(u64, VecDeque<T>)>>,
        id: Cow<'a, str>,
        group: u64,
        t: T,
    ) {
        let groups = many.entry(id).or_default();
        match groups.last_mut() {
            Some((g, calls)) if *g == group => calls.push_back(t),
            _ => groups.push((group, VecDeque::from([t]))),
        }
    }

    /// A result for `id` comes: the call it answers, if any (otherwise it is an orphan).
    pub(crate) fn answer(&mut self, id: &str) -> Option<T> {
        match &mut self.open {
            Open::Few(few) => {
                // The open calls with `id` from the last: the first of the last run of
                // them made by one message (what the map's last group is).
                let mut run: Option<(u64, usize)> = None;
                for (at, (i, g, _)) in few.iter().enumerate().rev() {
                    if i != id {
                        continue;
                    }
                    match run {
                        Some((group, _)) if group != *g => break,
                        _ => run = Some((*g, at)),
                    }
                }
                let (_, at) = run?;
                Some(few.remove(at).2)
            }
            Open::Many(many) => {
                let groups = many.get_mut(id)?;
                let (_, calls) = groups.last_mut()?;
                let t = calls.pop_front();
                if calls.is_empty() {
                    groups.pop();
                }
                t
            }
        }
    }
}

/// For a call made by an entry, a result recorded after it in the history, if any.
pub(crate) type Later<'a> = &'a dyn Fn(&str, EntryId) -> Option<EntryId>;

/// An unanswered call shown in the view, as the accounting tracks it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct OpenCall {
    /// The entry that made it.
    entry: EntryId,
    /// Its id.
    call_id: String,
    /// Whether it is in the in-flight tail (then nothing is sent for its result);
    /// otherwise `cost` tokens are sent for it (a missing-result note).
    tail: bool,
    cost: u32,
    /// Whether its note says the result is missing (no result was recorded after it
    /// when it was settled): a result recorded later turns the note into a placeholder
    /// naming it, as a reading with every entry in place gives.
    missing: bool,
}

/// What the renderers add to the view while repairing the pairing, kept up to date as
/// entries are recorded so that usage counts it: a note for each call left without a
/// result (other than the in-flight tail's), and the wrapper of each result whose call
/// is not in the request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Repairs {
    matcher: Matcher<'static, u64>,
    calls: std::collections::HashMap<u64, OpenCall>,
    next_call: u64,
    /// The calls of the last item that renders as a message of its own.
    tail: Vec<u64>,
    /// Tokens of the missing-result notes sent.
    missing_tokens: u64,
    /// Number of those notes (each a block).
    missing_blocks: u64,
    /// Tokens orphan wrappers add over the results they wrap (may be negative).
    orphan_extra: i64,
    /// The settled calls whose note says their result is missing, by call id (a call
    /// answered since may stay listed; it is skipped): what a result recorded later
    /// looks up, without reading every open call.
    missing: std::collections::HashMap<String, Vec<u64>>,
}

impl Repairs {
    /// Tokens and blocks the repairs add to the request.
    pub(crate) fn added(&self) -> (u64, u64) {
        let tokens = i64::try_from(self.missing_tokens).unwrap_or(i64::MAX) + self.orphan_extra;
        (u64::try_from(tokens).unwrap_or(0), self.missing_blocks)
    }

    /// The next item of the request: `entry` shown as `message`. `later` gives, for a
    /// call of an entry, a result recorded after it in the history, if any; `None` when
    /// the item is text alone (the calls it settles get missing-result notes, for good).
    pub(crate) fn feed(
        &mut self,
        counter: &dyn TokenCounter,
        entry: &Entry,
        message: &Message,
        later: Option<Later<'_>>,
    ) {
        let mut own_message = false;
        let mut after_result = false;
        for part in &message.parts {
            match part {
                Part::ToolResult(r) => own_message |= !self.answer(counter, entry, r),
                // Media after a result belong to it (see `Media`).
                Part::Image(_) | Part::Document(_) if after_result => {}
                Part::Text(_) | Part::ToolCall(_) | Part::Reasoning(_) => own_message = true,
                Part::Image(_) | Part::Document(_) => own_message = true,
            }
            after_result |= matches!(part, Part::ToolResult(_));
        }
        if !own_message {
            return;
        }
        // This item is now the last message: the calls of the previous one are no
        // longer in flight.
        self.settle_tail(counter, later);
        if message.role == Role::Assistant {
            for c in message.tool_calls() {
                let k = self.next_call;
                self.next_call += 1;
                self.matcher.call(Cow::Owned(c.id.clone()), entry.id.0, k);
                self.calls.insert(
                    k,
                    OpenCall {
                        entry: entry.id,
                        call_id: c.id.clone(),
                        tail: true,
                        cost: 0,
                        missing: false,
                    },
                );
                self.tail.push(k);
            }
        }
    }

    /// A result: it answers its call (which no longer needs a note), or, answering none,
    /// is sent as an orphan note (the difference in tokens kept). Whether it answered.
    fn answer(&mut self, counter: &dyn TokenCounter, entry: &Entry, r: &ToolResult) -> bool {
        match self.matcher.answer(&r.call_id) {
            Some(k) => {
                // A call answered in the tail leaves `calls`; its number stays in `tail`
                // (skipped there), so answering is O(1).
                if let Some(call) = self.calls.remove(&k)
                    && !call.tail
                {
                    self.missing_tokens = self.missing_tokens.saturating_sub(u64::from(call.cost));
                    self.missing_blocks = self.missing_blocks.saturating_sub(1);
                }
                true
            }
            None => {
                let wrapped = orphan_result(entry.id, &r.call_id, &r.content, r.is_error);
                let as_text = count_block(counter, Role::User, Part::Text(wrapped));
                // As the item counted it: its content as sent.
                let sent_result = Part::ToolResult(ToolResult {
                    call_id: r.call_id.clone(),
                    content: neutralize(&r.content).into_owned(),
                    is_error: r.is_error,
                });
                let as_result = count_block(counter, Role::Tool, sent_result);
                self.orphan_extra += i64::from(as_text) - i64::from(as_result);
                false
            }
        }
    }

    /// The calls of the last message, still unanswered, are no longer in flight: each is
    /// answered by a note (a placeholder for its later result, or a missing-result note).
    fn settle_tail(&mut self, counter: &dyn TokenCounter, later: Option<Later<'_>>) {
        for k in std::mem::take(&mut self.tail) {
            if let Some(call) = self.calls.get_mut(&k) {
                call.tail = false;
                let call_id = call.call_id.clone();
                let found = later.and_then(|later| later(&call_id, call.entry));
                call.missing = later.is_some() && found.is_none();
                if call.missing {
                    self.missing.entry(call_id.clone()).or_default().push(k);
                }
                let text = match found {
                    Some(r) => placeholder_text(r, None),
                    None => missing_result().to_owned(),
                };
                call.cost = count_block(
                    counter,
                    Role::Tool,
                    Part::ToolResult(ToolResult {
                        call_id,
                        content: text,
                        is_error: false,
                    }),
                );
                self.missing_tokens += u64::from(call.cost);
                self.missing_blocks += 1;
            }
        }
    }

    /// How many settled calls have a note naming a later result (for tests).
    #[cfg(test)]
    pub(crate) fn placeholders(&self) -> usize {
        self.calls
            .values()
            .filter(|c| !c.tail && !c.missing && c.cost > 0)
            .count()
    }

    /// A result for `call_id` was recorded (as `result`) after the calls already read:
    /// the settled calls with that id whose note said their result was missing now get
    /// the placeholder naming it, which is what reading them again with every entry in
    /// place gives (its `later` finds the first result recorded after the call).
    pub(crate) fn result_recorded(
        &mut self,
        counter: &dyn TokenCounter,
        call_id: &str,
        result: EntryId,
    ) {
        if self.missing.is_empty() {
            return; // the usual case: no call is waiting for a late result
        }
        let Some(listed) = self.missing.remove(call_id) else {
            return;
        };
        let mut still = Vec::new();
        for k in listed {
            let Some(call) = self.calls.get_mut(&k) else {
                continue; // answered since
            };
            if !call.missing {
                continue;
            }
            if call.entry >= result {
                still.push(k); // made after this result: a later one may name it
                continue;
            }
            let cost = count_block(
                counter,
                Role::Tool,
                Part::ToolResult(ToolResult {
                    call_id: call.call_id.clone(),
                    content: placeholder_text(result, None),
                    is_error: false,
                }),
            );
            self.missing_tokens = self.missing_tokens.saturating_sub(u64::from(call.cost));
            self.missing_tokens += u64::from(cost);
            call.cost = cost;
            call.missing = false;
        }
        if !still.is_empty() {
            self.missing.insert(call_id.to_owned(), still);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short list gives every answer the map gives, on random runs of calls and
    /// results that cross the list's size (groups out of order included).
    #[test]
    fn the_list_of_few_open_calls_answers_as_the_map_does() {
        let mut rng = fastrand::Rng::with_seed(7);
        let (mut moved, mut answered) = (0, 0);
        for run in 0..3_000 {
            let mut few: Matcher<'static, usize> = Matcher::default();
            let mut many: Matcher<'static, usize> = Matcher {
                open: Open::Many(foldhash::HashMap::default()),
            };
            let ids = rng.usize(1..6);
            let mut group = 0u64;
            let steps = rng.usize(0..80);
            for step in 0..steps {
                let id = format!("c{}", rng.usize(0..ids));
                if rng.u8(0..3) < 2 {
                    // Mostly a new message or the same one; now and then an earlier one.
                    group = match rng.u8(0..10) {
                        0 => group.saturating_sub(rng.u64(1..3)),
                        1..=5 => group + 1,
                        _ => group,
                    };
                    few.call(Cow::Owned(id.clone()), group, step);
                    many.call(Cow::Owned(id), group, step);
                } else {
                    let (a, b) = (few.answer(&id), many.answer(&id));
                    assert_eq!(a, b, "run {run}, step {step}, result for {id}");
                    answered += usize::from(a.is_some());
                }
            }
            for i in 0..ids {
                let id = format!("c{i}");
                loop {
                    let (a, b) = (few.answer(&id), many.answer(&id));
                    assert_eq!(a, b, "run {run}, draining {id}");
                    if a.is_none() {
                        break;
                    }
                    answered += 1;
                }
            }
            moved += usize::from(matches!(few.open, Open::Many(_)));
        }
        // Both ways were read, and answered.
        assert!(
            moved > 300 && moved < 2_700,
            "{moved} of 3000 runs moved to the map"
        );
        assert!(answered > 10_000, "{answered}");
    }
}
