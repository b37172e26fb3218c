//! Sealed journals (issue 27 item 3): with a key, every edit of the file made without it
//! (an added line, a removed one, an edit of the same length, a changed token count, a
//! role changed to system, another key) is refused on open, on read and on read-back,
//! naming the line and sequence; untouched, the journal opens to the view it wrote.

use std::num::NonZeroU8;
use std::path::Path;

use favur_context::compact::{Compaction, Edit};
use favur_context::journal::{JournalError, JournaledHistory, OpenOptions};
use favur_context::store::{SealKey, Tamper};
use favur_context::{EntryId, History, Store, fuzzy, strict};

fn key(byte: u8) -> SealKey {
    SealKey::new([byte; 32]).unwrap()
}

fn sealed() -> OpenOptions {
    OpenOptions::new().seal_key(key(7))
}

/// A sealed journal: header (seq 0), a pinned system prompt (1), `user aaaa` (2),
/// `user bbbb` (3), `assistant cccc` (4), a compaction dropping entry 1 (5), `user dddd`
/// (6). Returns the history as written.
fn write(path: &Path) -> (History, EntryId) {
    let mut h = sealed().open(path).unwrap();
    h.pin(strict!(system: "You are careful.")).unwrap();
    let a = h.append(fuzzy!(user: "aaaa")).unwrap();
    h.append(fuzzy!(user: "bbbb")).unwrap();
    h.append(fuzzy!(assistant: "cccc")).unwrap();
    let drop = Compaction {
        tier: NonZeroU8::new(2).unwrap(),
        edits: vec![Edit::Drop { id: a }],
        usage_after: None,
    };
    h.apply(drop).unwrap();
    h.append(fuzzy!(user: "dddd")).unwrap();
    assert_eq!(h.seal_head().unwrap().seq, 6);
    (h.history().clone(), a)
}

fn lines(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(str::to_owned).collect()
}

fn put(path: &Path, lines: &[String]) {
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(path, text).unwrap();
}

/// The record inside a sealed line.
fn inner(line: &str) -> String {
    assert!(line.starts_with("{\"sealed\":[\""), "{line}");
    line[12 + 64 + 2..line.len() - 2].to_owned()
}

/// Opening with `options` is refused as tampered at `seq` with `problem`.
fn refused(path: &Path, options: &OpenOptions, seq: u64, problem: Tamper, case: &str) {
    match options.open(path) {
        Err(JournalError::Tampered {
            seq: s,
            line,
            problem: p,
            ..
        }) => {
            assert_eq!((s, &p), (seq, &problem), "{case}");
            assert_eq!(line, seq + 1, "{case}");
        }
        Err(other) => panic!("{case}: another error: {other}"),
        Ok(_) => panic!("{case}: a tampered journal opened"),
    }
    // Reading it without a lock is refused alike.
    let text = std::fs::read(path).unwrap();
    assert!(
        matches!(options.read(&text[..]), Err(JournalError::Tampered { seq: s, .. }) if s == seq),
        "{case}: read"
    );
}

type Edit_ = fn(&mut Vec<String>);

#[test]
fn every_edit_of_a_sealed_journal_is_refused_with_its_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sealed.jsonl");
    let (written, _) = write(&path);
    let original = lines(&path);
    assert_eq!(original.len(), 7);
    assert!(
        original[0].contains("\"seal\":\""),
        "the header says it is sealed"
    );
    let cases: [(&str, Edit_, u64, Tamper); 8] = [
        (
            "an added line (a copy of a sealed one)",
            |l| l.push(l[3].clone()),
            7,
            Tamper::Mac,
        ),
        (
            "an added hand-written pinned system entry",
            |l| {
                let forged = inner(&l[1]).replace("\"id\":0", "\"id\":5");
                l.push(forged);
            },
            7,
            Tamper::Unmarked,
        ),
        (
            "a removed middle line",
            |l| drop(l.remove(3)),
            3,
            Tamper::Mac,
        ),
        (
            "a same-length in-place edit",
            |l| l[3] = l[3].replace("bbbb", "bbbx"),
            3,
            Tamper::Mac,
        ),
        (
            "a changed token count",
            |l| {
                let re = regex::Regex::new(r#""tokens":\d+"#).unwrap();
                l[4] = re.replace(&l[4], "\"tokens\":7").into_owned();
            },
            4,
            Tamper::Mac,
        ),
        (
            "a role changed to system",
            |l| l[3] = l[3].replace("\"role\":\"user\"", "\"role\":\"system\""),
            3,
            Tamper::Mac,
        ),
        (
            "a MAC moved from another line",
            |l| {
                let other = l[2][12..76].to_owned();
                l[3].replace_range(12..76, &other);
            },
            3,
            Tamper::Mac,
        ),
        (
            "a changed framing in the header",
            |l| l[0] = l[0].replace("\"framing_tokens\":4", "\"framing_tokens\":9"),
            0,
            Tamper::Mac,
        ),
    ];
    for (case, edit, seq, problem) in cases {
        let mut edited = original.clone();
        edit(&mut edited);
        assert_ne!(edited, original, "{case}: the edit changes the file");
        put(&path, &edited);
        refused(&path, &sealed(), seq, problem, case);
        assert_eq!(lines(&path), edited, "{case}: the file is left as it was");
    }
    // Another key: the header does not verify.
    put(&path, &original);
    refused(
        &path,
        &OpenOptions::new().seal_key(key(8)),
        0,
        Tamper::Mac,
        "another key",
    );
    // Untouched: opens to the view it wrote, and salvage does not load past tampering.
    let h = sealed().open(&path).unwrap();
    assert_eq!(h.history().view(), written.view());
    assert_eq!(h.history().len(), written.len());
    assert_eq!(h.report().seal_head.unwrap().seq, 6);
}

#[test]
fn a_sealed_journal_without_its_key_and_a_stripped_one_with_a_key_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sealed.jsonl");
    write(&path);
    refused(&path, &OpenOptions::new(), 0, Tamper::KeyNeeded, "no key");
    refused(
        &path,
        &OpenOptions::new().salvage(true),
        0,
        Tamper::KeyNeeded,
        "no key, salvaging",
    );
    // The MACs stripped: an unsealed journal, which a key does not accept.
    let stripped: Vec<String> = lines(&path).iter().map(|l| inner(l)).collect();
    put(&path, &stripped);
    refused(&path, &sealed(), 0, Tamper::NotSealed, "stripped");
    // Without a key it is an ordinary journal (that is what no key protects against:
    // nothing).
    assert!(OpenOptions::new().open(&path).is_ok());
}

#[test]
fn salvage_does_not_load_past_a_tampered_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sealed.jsonl");
    write(&path);
    let mut l = lines(&path);
    l[5] = l[5].replace("\"tier\":2", "\"tier\":3");
    put(&path, &l);
    refused(
        &path,
        &sealed().salvage(true),
        5,
        Tamper::Mac,
        "salvage on a tampered compaction",
    );
}

#[test]
fn an_original_edited_after_open_is_refused_on_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sealed.jsonl");
    let (_, a) = write(&path);
    let h = sealed().open(&path).unwrap();
    assert!(
        !h.history().entries().iter().any(|e| e.id() == a),
        "evicted"
    );
    assert_eq!(h.history().recall(a).unwrap().message().text(), "aaaa");
    // Edited in place, same length, while the journal is open.
    let mut l = lines(&path);
    l[2] = l[2].replace("aaaa", "aaax");
    put(&path, &l);
    let err = h.history().recall(a).unwrap_err();
    assert!(err.to_string().contains("record 2 is tampered"), "{err}");
    assert!(h.history().full_copy().is_err());
}

#[test]
fn a_sealed_journal_goes_on_after_reopen_and_a_torn_last_line_is_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sealed.jsonl");
    write(&path);
    let mut h = sealed().open(&path).unwrap();
    h.append(fuzzy!(user: "eeee")).unwrap();
    let head = h.seal_head().unwrap();
    assert_eq!(head.seq, 7);
    drop(h);
    // A torn append (never acknowledged) is cut off as in any journal.
    let mut text = std::fs::read(&path).unwrap();
    text.extend_from_slice(b"{\"sealed\":[\"00");
    std::fs::write(&path, &text).unwrap();
    let mut h = sealed().open(&path).unwrap();
    assert!(h.report().torn_tail.is_some());
    assert_eq!(h.report().seal_head, Some(head));
    h.append(fuzzy!(user: "ffff")).unwrap();
    drop(h);
    let h = sealed().open(&path).unwrap();
    assert_eq!(h.seal_head().unwrap().seq, 8);
    assert_eq!(h.history().len(), 7);
    // A sealed header torn before its `\n` (the journal's creation was cut): a new journal.
    let torn = dir.path().join("torn.jsonl");
    std::fs::write(&torn, b"{\"sealed\":[\"9c5d").unwrap();
    let h = sealed().open(&torn).unwrap();
    assert!(h.report().created);
    assert_eq!(h.seal_head().unwrap().seq, 0);
    drop(h);
    assert!(sealed().open(&torn).is_ok());
    // An unsealed journal is written exactly as before: no seal, no MAC.
    let plain = dir.path().join("plain.jsonl");
    let mut p = JournaledHistory::open(&plain).unwrap();
    p.append(fuzzy!(user: "x")).unwrap();
    assert!(p.seal_head().is_none());
    drop(p);
    let text = std::fs::read_to_string(&plain).unwrap();
    assert!(text.starts_with("{\"journal\":{\"format\":1,"));
    assert!(!text.contains("\"seal"));
}
