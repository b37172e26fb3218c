//! How a summary's budget is spent: every entry, in turn, gets its next line of each
//! kind, the lines the agent acted on first (the most recently acted on first), then
//! errors and outcomes, lead lines (of prose and of short outputs), locations, hits,
//! definitions, their docs and paths.

use super::entry::Digest;
use super::item::Item;
use super::line_kind::LineKind;
use super::names::Shown;
use super::regions::MAX_REGION_LINES;

/// Tokens `text` costs by the heuristic counter's rule, plus one for its line break.
pub(super) fn cost(text: &str) -> usize {
    let words = text.split_ascii_whitespace().count();
    text.len().div_ceil(4).max(words) + 1
}

/// What a summary keeps of one entry, as the passes choose it.
pub(super) struct Picks {
    /// Its lines acted on, and their context, kept (indexes in [`Digest::items`]).
    pub(super) acted: Vec<usize>,
    /// Its other items kept.
    pub(super) chosen: Vec<usize>,
    /// Per item: whether it is kept.
    pub(super) picked: Vec<bool>,
    /// Per segment of a hot region: whether it is kept.
    pub(super) segments: Vec<bool>,
    /// Per region: the lines its kept segments add.
    pub(super) region_lines: Vec<usize>,
    /// Tokens the kept segments cost.
    pub(super) region_tokens: usize,
    /// The digest that holds the first line this entry skipped as kept already (the
    /// same line of the same file); after [`note_twins`], only where the entry says so.
    pub(super) twin_of: Option<usize>,
}

impl Picks {
    /// Nothing kept yet of an entry of `items` items.
    pub(super) fn new(items: usize) -> Self {
        Picks {
            acted: Vec::new(),
            chosen: Vec::new(),
            picked: vec![false; items],
            segments: Vec::new(),
            region_lines: Vec::new(),
            region_tokens: 0,
            twin_of: None,
        }
    }
}

/// How many lines of a kind (or acted on) one entry may show in a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cap {
    /// Up to this many.
    Lines(usize),
    /// As many as the budget allows.
    Unbounded,
}

impl Cap {
    /// Whether an entry that shows `taken` lines may show one more.
    pub(super) fn allows(self, taken: usize) -> bool {
        match self {
            Cap::Lines(cap) => taken < cap,
            Cap::Unbounded => true,
        }
    }
}

/// Caps per kind in the first pass (the rest comes after).
pub(super) fn first_pass_cap(kind: Option<LineKind>, head: usize) -> Cap {
    Cap::Lines(match kind {
        None => head.min(1),
        Some(LineKind::Error | LineKind::Outcome) => 6,
        Some(LineKind::Location) => 4,
        Some(LineKind::Hit | LineKind::Definition) => 8,
        Some(LineKind::Doc) => 4,
        Some(LineKind::Path) => 24,
        Some(_) => 0,
    })
}

/// Lines acted on kept per entry in the first pass.
pub(super) const FIRST_PASS_ACTED: Cap = Cap::Lines(6);

/// The ranks given room, in order; `LEAD` is the first line of a person's or the agent's
/// text.
const LEAD: u8 = 1;
const ORDER: [(u8, Option<LineKind>); 8] = [
    (0, Some(LineKind::Error)),
    (0, Some(LineKind::Outcome)),
    (LEAD, None),
    (2, Some(LineKind::Location)),
    (3, Some(LineKind::Hit)),
    (4, Some(LineKind::Definition)),
    (4, Some(LineKind::Doc)),
    (5, Some(LineKind::Path)),
];

/// Keeps the lines the agent acted on, the most recently acted on first (then those
/// holding more of what it typed, then in order), each with the definition that
/// encloses it when that fits too, up to `cap` per entry, while the budget lasts.
pub(super) fn pick_acted<'s>(
    digests: &'s [Digest<'_>],
    picks: &mut [Picks],
    cap: Cap,
    (used, budget): (&mut usize, usize),
    shown: &mut Shown<'s>,
) {
    let mut ranked: Vec<(std::cmp::Reverse<super::acted::Acted>, usize, usize)> = Vec::new();
    for (di, (d, p)) in digests.iter().zip(&*picks).enumerate() {
        for (i, it) in d.items.iter().enumerate() {
            if let Some(a) = it.acted
                && !p.picked[i]
            {
                ranked.push((std::cmp::Reverse(a), di, i));
            }
        }
    }
    ranked.sort_unstable();
    for (_, di, i) in ranked {
        let (d, p) = (&digests[di], &mut picks[di]);
        let taken = p
            .acted
            .iter()
            .filter(|&&k| d.items[k].acted.is_some())
            .count();
        if !cap.allows(taken) || p.picked[i] || shown_elsewhere((d, di), i, p, shown) {
            continue;
        }
        let c = cost(&d.items[i].text) + 1;
        if *used + c > budget {
            continue;
        }
        take((d, di), p, i, (used, c), shown);
        // Its enclosing definition, if that fits too.
        let context = d.items[i]
            .context
            .and_then(|o| d.items.iter().position(|it| it.order == o));
        let open = |k: &usize| !p.picked[*k] && shown.holder(d.key, &d.items[*k].text).is_none();
        if let Some(k) = context.filter(open) {
            let c = cost(&d.items[k].text) + 1;
            if *used + c <= budget {
                take((d, di), p, k, (used, c), shown);
            }
        }
    }
}

/// Whether item `i` of digest `di` is a line already kept for another entry of the same
/// file: it is then skipped, and the first entry that holds such a line is remembered.
fn shown_elsewhere(
    (d, di): (&Digest<'_>, usize),
    i: usize,
    p: &mut Picks,
    shown: &Shown<'_>,
) -> bool {
    let Some(h) = shown.holder(d.key, &d.items[i].text) else {
        return false;
    };
    if h != di {
        p.twin_of.get_or_insert(h);
    }
    true
}

/// What an entry whose lines are all kept under the header `holder` (the same lines of
/// the same file) says instead.
pub(super) fn twin_note(holder: &str) -> String {
    let id = holder.split(' ').next().unwrap_or(holder);
    format!("(its lines as shown under {id})")
}

/// Each entry that kept no line because its lines are kept for another entry says so
/// ([`twin_note`]) in the room left; other entries say nothing.
pub(super) fn note_twins(
    digests: &[Digest<'_>],
    picks: &mut [Picks],
    (used, budget): (&mut usize, usize),
) {
    for p in picks.iter_mut() {
        let Some(h) = p.twin_of.take() else {
            continue;
        };
        if !(p.acted.is_empty() && p.chosen.is_empty()) {
            continue;
        }
        let Some(holder) = digests.get(h) else {
            continue;
        };
        let c = cost(&twin_note(&holder.header)) + 1;
        if *used + c <= budget {
            *used += c;
            p.twin_of = Some(h);
        }
    }
}

/// Keeps the segments of hot regions whose anchors are kept, the most recently acted on
/// first: each whole or not at all, a region at most [`MAX_REGION_LINES`] lines and an
/// entry's segments at most `share` tokens, while the budget lasts. A segment is shown
/// in the acted section, with its anchors (one kept by its kind moves there).
pub(super) fn pick_regions<'s>(
    digests: &'s [Digest<'_>],
    picks: &mut [Picks],
    share: usize,
    (used, budget): (&mut usize, usize),
    shown: &mut Shown<'s>,
) {
    let mut ranked: Vec<(std::cmp::Reverse<super::acted::Acted>, usize, usize)> = Vec::new();
    for (di, (d, p)) in digests.iter().zip(picks.iter_mut()).enumerate() {
        p.segments.resize(d.segments.len(), false);
        let regions = d.segments.iter().map(|s| s.region + 1).max().unwrap_or(0);
        p.region_lines.resize(regions.max(p.region_lines.len()), 0);
        for (si, s) in d.segments.iter().enumerate() {
            if !p.segments[si] && s.anchors.iter().all(|&a| p.picked[a]) {
                ranked.push((std::cmp::Reverse(s.acted), di, si));
            }
        }
    }
    ranked.sort_unstable();
    for (_, di, si) in ranked {
        take_segment(
            (&digests[di], di),
            &mut picks[di],
            si,
            share,
            (&mut *used, budget),
            shown,
        );
    }
}

/// Keeps segment `si` of `d` if its anchors are kept and it fits: whole, its region at
/// most [`MAX_REGION_LINES`] lines, the entry's segments at most `share` tokens.
fn take_segment<'s>(
    (d, di): (&'s Digest<'_>, usize),
    p: &mut Picks,
    si: usize,
    share: usize,
    (used, budget): (&mut usize, usize),
    shown: &mut Shown<'s>,
) {
    let Some(s) = d.segments.get(si) else {
        return;
    };
    if p.segments.get(si).is_none_or(|&t| t) || !s.anchors.iter().all(|&a| p.picked[a]) {
        return;
    }
    let lines = s.lines.len();
    let region = p.region_lines.get(s.region).copied().unwrap_or(0);
    let add: usize = d.items[s.lines.clone()]
        .iter()
        .map(|it| cost(&it.text) + 1)
        .sum();
    // What the lines it absorbs cost where they are kept on their own.
    let refund: usize = s
        .absorbs
        .iter()
        .filter(|&&k| p.chosen.contains(&k))
        .map(|&k| cost(&d.items[k].text) + 1)
        .sum();
    let over = region + lines > MAX_REGION_LINES
        || p.region_tokens + add > share
        || (*used + add).saturating_sub(refund) > budget;
    if over {
        return;
    }
    for &k in &s.absorbs {
        p.chosen.retain(|&c| c != k);
        p.picked[k] = true;
    }
    for a in s.anchors {
        if let Some(at) = p.chosen.iter().position(|&c| c == a) {
            p.chosen.remove(at);
            p.acted.push(a);
        }
    }
    for i in s.lines.clone() {
        shown.add_text(&d.items[i].text);
        shown.add_line(d.key, &d.items[i].text, di);
        p.acted.push(i);
        p.picked[i] = true;
    }
    *used = (*used + add).saturating_sub(refund);
    p.region_tokens += add;
    if let Some(r) = p.region_lines.get_mut(s.region) {
        *r += lines;
    }
    if let Some(t) = p.segments.get_mut(si) {
        *t = true;
    }
}

/// Keeps item `i` of `d` (digest `di`) in the acted section, at cost `c`.
fn take<'s>(
    (d, di): (&'s Digest<'_>, usize),
    p: &mut Picks,
    i: usize,
    (used, c): (&mut usize, usize),
    shown: &mut Shown<'s>,
) {
    *used += c;
    shown.add_text(&d.items[i].text);
    shown.add_line(d.key, &d.items[i].text, di);
    p.acted.push(i);
    p.picked[i] = true;
}

/// Gives each shown digest, in turn, its next line of `kind` (or its lead lines), up to
/// `cap` lines of that kind per entry, while the budget lasts.
/// One pass over the ranks of `ORDER`, each kind given up to `cap_of(kind)` lines.
pub(super) fn fill_ranks<'s>(
    digests: &'s [Digest<'_>],
    picks: &mut [Picks],
    cap_of: impl Fn(Option<LineKind>) -> Cap,
    used: &mut usize,
    budget: usize,
    shown: &mut Shown<'s>,
) {
    // Per digest: lines of the rank taken, and where its scan is; the digests still
    // scanned (one set for all ranks).
    let mut scratch = Scratch::default();
    for (rank, kind) in ORDER {
        let cap = cap_of(kind);
        fill(
            digests,
            picks,
            Rank { rank, kind, cap },
            (used, budget),
            shown,
            &mut scratch,
        );
    }
}

/// One rank of [`ORDER`] and its cap.
struct Rank {
    rank: u8,
    kind: Option<LineKind>,
    cap: Cap,
}

/// What [`fill`] keeps per digest, its room kept from one rank to the next.
#[derive(Default)]
struct Scratch {
    /// Lines of the rank taken, per digest.
    taken: Vec<usize>,
    /// Where the scan of each digest's items is.
    cursor: Vec<usize>,
    /// The digests that may still take a line of the rank, in order.
    active: Vec<usize>,
}

/// Gives each digest in turn its next line of the rank, until none takes one: a digest
/// that took none in a turn (its items scanned to the end, or the next one over the
/// budget) or reached the cap is not asked again.
fn fill<'s>(
    digests: &'s [Digest<'_>],
    picks: &mut [Picks],
    Rank { rank, kind, cap }: Rank,
    (used, budget): (&mut usize, usize),
    shown: &mut Shown<'s>,
    Scratch {
        taken,
        cursor,
        active,
    }: &mut Scratch,
) {
    let wanted = |it: &Item<'_>| match kind {
        _ if it.region => false,
        Some(k) => it.kind == k,
        None => rank == LEAD && it.kind == LineKind::Plain && it.acted.is_none(),
    };
    taken.clear();
    if cap == Cap::Unbounded {
        taken.resize(digests.len(), 0); // no cap to reach
    } else {
        taken.extend(
            digests
                .iter()
                .zip(&*picks)
                .map(|(d, p)| p.chosen.iter().filter(|&&i| wanted(&d.items[i])).count()),
        );
    }
    cursor.clear();
    cursor.resize(digests.len(), 0);
    active.clear();
    active.extend((0..digests.len()).filter(|&di| cap.allows(taken[di])));
    // Frames are ordered innermost first at the end of the items; scanning in item order
    // reaches them in that order too.
    while !active.is_empty() {
        active.retain(|&di| {
            let (d, p) = (&digests[di], &mut picks[di]);
            while cursor[di] < d.items.len() {
                let i = cursor[di];
                cursor[di] += 1;
                if !wanted(&d.items[i]) || p.picked[i] || shown_elsewhere((d, di), i, p, shown) {
                    continue;
                }
                // A doc line is offered with its definition only.
                if d.items[i].of.is_some_and(|k| !p.picked[k]) {
                    continue;
                }
                let c = cost(&d.items[i].text) + 1;
                if *used + c > budget {
                    return false;
                }
                *used += c;
                shown.add_text(&d.items[i].text);
                shown.add_line(d.key, &d.items[i].text, di);
                p.chosen.push(i);
                p.picked[i] = true;
                taken[di] += 1;
                return cap.allows(taken[di]);
            }
            false
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    /// [`fill`] as it read before its set of digests still scanned: rounds over every
    /// digest until a round takes no line.
    fn fill_by_rounds<'s>(
        digests: &'s [Digest<'_>],
        picks: &mut [Picks],
        Rank { rank, kind, cap }: Rank,
        (used, budget): (&mut usize, usize),
        shown: &mut Shown<'s>,
    ) {
        let wanted = |it: &Item| match kind {
            Some(k) => it.kind == k,
            None => rank == LEAD && it.kind == LineKind::Plain,
        };
        let mut taken: Vec<usize> = digests
            .iter()
            .zip(&*picks)
            .map(|(d, p)| p.chosen.iter().filter(|&&i| wanted(&d.items[i])).count())
            .collect();
        let mut cursor = vec![0; digests.len()];
        loop {
            let mut any = false;
            for (di, (d, p)) in digests.iter().zip(&mut *picks).enumerate() {
                if !cap.allows(taken[di]) {
                    continue;
                }
                while cursor[di] < d.items.len() {
                    let i = cursor[di];
                    cursor[di] += 1;
                    if !wanted(&d.items[i]) || p.picked[i] {
                        continue;
                    }
                    let c = cost(&d.items[i].text) + 1;
                    if *used + c > budget {
                        cursor[di] = d.items.len();
                        break;
                    }
                    *used += c;
                    shown.add_text(&d.items[i].text);
                    p.chosen.push(i);
                    p.picked[i] = true;
                    taken[di] += 1;
                    any = true;
                    break;
                }
            }
            if !any {
                break;
            }
        }
    }

    #[test]
    fn fill_asks_the_digests_left_what_rounds_over_all_asked() {
        const KINDS: [LineKind; 8] = [
            LineKind::Plain,
            LineKind::Doc,
            LineKind::Error,
            LineKind::Outcome,
            LineKind::Location,
            LineKind::Hit,
            LineKind::Definition,
            LineKind::Path,
        ];
        let mut rng = fastrand::Rng::with_seed(0x6a09_e667_f3bc_c908);
        for _ in 0..400 {
            let digests: Vec<Digest<'_>> = (0..rng.usize(1..=8))
                .map(|_| Digest {
                    header: String::new(),
                    output_lines: 0,
                    items: (0..rng.usize(0..40))
                        .map(|order| Item {
                            kind: KINDS[rng.usize(0..KINDS.len())],
                            order,
                            text: Cow::Owned("ab cd_e ".repeat(rng.usize(0..6))),
                            acted: None,
                            context: None,
                            region: false,
                            depth: 0,
                            of: None,
                        })
                        .collect(),
                    segments: Vec::new(),
                    key: None,
                })
                .collect();
            let budget = rng.usize(0..600);
            let head = rng.usize(0..3);
            let fresh =
                || -> Vec<Picks> { digests.iter().map(|d| Picks::new(d.items.len())).collect() };
            let caps: [&dyn Fn(Option<LineKind>) -> Cap; 2] =
                [&|kind| first_pass_cap(kind, head), &|kind| {
                    kind.map_or(Cap::Lines(head), |_| Cap::Unbounded)
                }];
            let (mut picks, mut used, mut shown) = (fresh(), 0, Shown::default());
            let (mut by_rounds, mut used_by_rounds, mut shown_by_rounds) =
                (fresh(), 0, Shown::default());
            for cap_of in caps {
                fill_ranks(&digests, &mut picks, cap_of, &mut used, budget, &mut shown);
                for (rank, kind) in ORDER {
                    let cap = cap_of(kind);
                    fill_by_rounds(
                        &digests,
                        &mut by_rounds,
                        Rank { rank, kind, cap },
                        (&mut used_by_rounds, budget),
                        &mut shown_by_rounds,
                    );
                }
                assert_eq!(used, used_by_rounds);
                for (p, q) in picks.iter().zip(&by_rounds) {
                    assert_eq!(p.chosen, q.chosen);
                }
            }
        }
    }
}
