//! Eviction keeps exactly the view and the pinned entries.
use super::*;
use crate::view::Edit;
use crate::{Retention, fuzzy, strict};

fn summary(h: &History, replaces: Vec<EntryId>) -> Entry {
    Entry::new(
        h.next_id(),
        Retention::Fuzzy,
        1,
        CallSite::new("t", 1, 1),
        EntryKind::Summary { replaces },
        Message::assistant("gist"),
    )
}

#[test]
fn eviction_keeps_exactly_the_view_and_the_pinned() {
    let mut h = History::new();
    h.pin(strict!(system: "sys"));
    let ids: Vec<EntryId> = (0..6).map(|i| h.append(fuzzy!(user: "m{i}"))).collect();
    let s = summary(&h, vec![ids[0], ids[1], ids[2]]);
    let c = Compaction {
        tier: 1,
        edits: vec![
            Edit::Summarize { summary: s },
            Edit::Drop { id: ids[4] },
            // Summarized but kept in another form: stays.
            Edit::Reform {
                id: ids[2],
                form: Form::CallsOnly,
                tokens: 1,
            },
        ],
        usage_after: None,
    };
    let derived = h.derive(&c).unwrap();
    h.evict_left_view(&c);
    h.commit(c, derived);
    let held: Vec<u64> = h.entries().iter().map(|e| e.id.0).collect();
    assert_eq!(held, vec![0, 3, 4, 6, 7]);
    assert_eq!(h.entries().len(), h.view().len() + h.pinned().len());
    assert_eq!(h.len(), 8);
    // Lookups by id: held ones found at their new positions, evicted ones absent.
    assert_eq!(h.entry(EntryId(6)).unwrap().message().text(), "m5");
    assert_eq!(h.entry(EntryId(7)).unwrap().message().text(), "gist");
    for gone in [1, 2, 5] {
        assert!(h.entry(EntryId(gone)).is_none(), "#{gone}");
    }
    assert!(h.entry(EntryId(3)).is_some());
    assert!(h.entry(EntryId(8)).is_none());
    assert!(h.entry(EntryId(u64::MAX)).is_none());
}

#[test]
fn fill_evicted_restores_every_original_in_order() {
    let mut h = History::new();
    let ids: Vec<EntryId> = (0..5).map(|i| h.append(fuzzy!(user: "m{i}"))).collect();
    let full = h.clone();
    let c = Compaction {
        tier: 1,
        edits: vec![Edit::Drop { id: ids[1] }, Edit::Drop { id: ids[3] }],
        usage_after: None,
    };
    let derived = h.derive(&c).unwrap();
    h.evict_left_view(&c);
    h.commit(c, derived);
    assert_eq!(h.entries().len(), 3);
    let mut asked = Vec::new();
    h.fill_evicted(|id| {
        asked.push(id.0);
        Ok::<_, ()>(full.entries()[id.0 as usize].clone())
    })
    .unwrap();
    assert_eq!(asked, vec![1, 3]);
    assert_eq!(h.entries(), full.entries());
    // An error from the fetch is passed on.
    let mut h2 = History::new();
    let id = h2.append(fuzzy!(user: "x"));
    let c = Compaction {
        tier: 1,
        edits: vec![Edit::Drop { id }],
        usage_after: None,
    };
    let derived = h2.derive(&c).unwrap();
    h2.evict_left_view(&c);
    h2.commit(c, derived);
    assert_eq!(h2.fill_evicted(|_| Err("gone")), Err("gone"));
}
