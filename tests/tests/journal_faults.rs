//! The catalogue of bad journal input (docs/journal.md): each case asserts the exact error
//! variant and the line and byte offset it names, or, for a torn tail and salvage, exactly
//! what was cut, kept and moved aside.

mod common;

use std::path::{Path, PathBuf};

use favur_context::compact::ApplyError;
use favur_context::journal::{Corruption, JournalError, JournaledHistory, OpenOptions};
use favur_context::store::RecordError;
use favur_context::{EntryId, History, Retention, Store, fuzzy, strict};
use tempfile::TempDir;

/// A journal with a header, a pinned entry and two appended entries (lines 1 to 4), and
/// its lines (each with its `\n`).
fn base() -> (TempDir, PathBuf, Vec<String>) {
    let (dir, path, mut h) = common::new_journal("h.jsonl", OpenOptions::new());
    h.pin(strict!(system: "You are careful.")).unwrap();
    h.append(fuzzy!(user: "one")).unwrap();
    h.append(fuzzy!(assistant: "two")).unwrap();
    drop(h);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines = text.split_inclusive('\n').map(str::to_owned).collect();
    (dir, path, lines)
}

/// Writes `lines` then `bad` (as line `lines.len() + 1`) then `after`, and returns the
/// byte offset of the bad line.
fn write_with(path: &Path, lines: &[String], bad: &[u8], after: &[&str]) -> u64 {
    let mut bytes: Vec<u8> = lines.concat().into_bytes();
    let offset = bytes.len() as u64;
    bytes.extend_from_slice(bad);
    for a in after {
        bytes.extend_from_slice(a.as_bytes());
    }
    std::fs::write(path, bytes).unwrap();
    offset
}

/// Writes `lines` and then the one bad line `bad` (the fifth), opens the journal, and
/// expects it to be named as corrupt there: its problem.
/// What opening a fresh [`base`] journal whose fifth line is `bad` reports.
fn bad_fifth_line(bad: &[u8]) -> Corruption {
    let (_d, path, lines) = base();
    with_bad_fifth_line(&path, &lines, bad)
}

fn with_bad_fifth_line(path: &Path, lines: &[String], bad: &[u8]) -> Corruption {
    let offset = write_with(path, lines, bad, &[]);
    corrupt_at(path, 5, offset)
}

/// Opens `path` and expects a [`JournalError::Corrupt`] at `line`/`offset`.
fn corrupt_at(path: &Path, line: u64, offset: u64) -> Corruption {
    match JournaledHistory::open(path) {
        Err(JournalError::Corrupt {
            path: p,
            line: l,
            offset: o,
            problem,
        }) => {
            assert_eq!(p, path);
            assert_eq!((l, o), (line, offset), "wrong place for {problem}");
            problem
        }
        other => panic!("expected a Corrupt error, got {other:?}"),
    }
}

fn entry_line(id: u64, retention: &str) -> String {
    format!(
        r#"{{"entry":{{"id":{id},"retention":{retention},"tokens":1,"site":{{"file":"a.rs","line":1,"column":1}},"message":{{"role":"user","parts":[{{"type":"text","text":"x"}}]}}}}}}"#
    ) + "\n"
}

#[test]
fn invalid_json_names_line_and_offset() {
    let (_d, path, lines) = base();
    let offset = write_with(&path, &lines, b"{\"entry\": {\n", &[]);
    let problem = corrupt_at(&path, 5, offset);
    assert!(
        matches!(problem, Corruption::InvalidJson { .. }),
        "{problem:?}"
    );
}

#[test]
fn damage_in_the_middle_is_an_error_not_a_skip() {
    let (_d, path, lines) = base();
    // A bad line 3 with good lines after it.
    let offset = write_with(&path, &lines[..2], b"not json\n", &[&lines[2], &lines[3]]);
    let err = JournaledHistory::open(&path).unwrap_err();
    let message = err.to_string();
    assert!(message.contains("h.jsonl"), "{message}");
    assert!(message.contains("line 3"), "{message}");
    assert!(
        message.contains(&format!("byte offset {offset}")),
        "{message}"
    );
    assert!(matches!(
        err,
        JournalError::Corrupt {
            line: 3,
            problem: Corruption::InvalidJson { .. },
            ..
        }
    ));
    // The file is untouched by a failed open.
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        format!("{}{}not json\n{}{}", lines[0], lines[1], lines[2], lines[3])
    );
}

#[test]
fn damaged_last_complete_line_is_an_error_too() {
    // Only an unterminated last line is a torn write; a terminated bad one is damage.
    let (_d, path, lines) = base();
    let offset = write_with(&path, &lines, b"{\"entry\":{\"id\":3\n", &[]);
    let problem = corrupt_at(&path, 5, offset);
    assert!(matches!(problem, Corruption::InvalidJson { .. }));
}

#[test]
fn invalid_utf8() {
    assert_eq!(
        bad_fifth_line(b"{\"entry\":\"\xff\xfe\"}\n"),
        Corruption::InvalidUtf8 { valid_up_to: 10 }
    );
}

#[test]
fn missing_class() {
    let line = entry_line(3, "null").replace(r#""retention":null,"#, "");
    assert_eq!(
        bad_fifth_line(line.as_bytes()),
        Corruption::MissingClass {
            id: Some(EntryId(3))
        }
    );
}

#[test]
fn unknown_class() {
    assert_eq!(
        bad_fifth_line(entry_line(3, r#""eternal""#).as_bytes()),
        Corruption::UnknownClass {
            id: Some(EntryId(3)),
            found: r#""eternal""#.into()
        }
    );
}

#[test]
fn known_class_parses() {
    // The control for the two cases above: the same line with a real class loads.
    let (_d, path, lines) = base();
    write_with(&path, &lines, entry_line(3, r#""strict""#).as_bytes(), &[]);
    let h = JournaledHistory::open(&path).unwrap();
    assert_eq!(
        h.history().recall(EntryId(3)).unwrap().retention(),
        Retention::Strict
    );
}

#[test]
fn malformed_entry() {
    let (_d, path, lines) = base();
    let line = entry_line(3, r#""fuzzy""#).replace(r#""tokens":1"#, r#""tokens":"many""#);
    let offset = write_with(&path, &lines, line.as_bytes(), &[]);
    let problem = corrupt_at(&path, 5, offset);
    assert!(
        matches!(&problem, Corruption::InvalidEntry { id: Some(EntryId(3)), message } if message.contains("tokens") || message.contains("string")),
        "{problem:?}"
    );
}

#[test]
fn unknown_record_type() {
    assert_eq!(
        bad_fifth_line(b"{\"snapshot\":{\"at\":3}}\n"),
        Corruption::UnknownRecord {
            kind: "snapshot".into()
        }
    );
}

#[test]
fn not_a_record() {
    let (_d, path, lines) = base();
    for bad in [
        "[1,2]\n",
        "{}\n",
        "{\"entry\":{},\"compaction\":{}}\n",
        "\"entry\"\n",
    ] {
        let offset = write_with(&path, &lines, bad.as_bytes(), &[]);
        assert_eq!(
            corrupt_at(&path, 5, offset),
            Corruption::NotARecord,
            "{bad}"
        );
    }
}

#[test]
fn empty_line() {
    let (_d, path, lines) = base();
    assert!(matches!(
        with_bad_fifth_line(&path, &lines, b"\n"),
        Corruption::InvalidJson { .. }
    ));
}

#[test]
fn newer_format_version() {
    let (_d, path, lines) = base();
    let newer = lines[0].replace("\"format\":1", "\"format\":2");
    assert_ne!(newer, lines[0]);
    write_with(&path, &[], newer.as_bytes(), &[&lines[1]]);
    match JournaledHistory::open(&path).unwrap_err() {
        JournalError::Version { path: p, found } => {
            assert_eq!((p, found), (path.clone(), 2));
        }
        other => panic!("{other:?}"),
    }
    let message = JournaledHistory::open(&path).unwrap_err().to_string();
    assert!(message.contains("format version 2"), "{message}");
    // Even salvage does not touch a journal of another version.
    assert!(matches!(
        OpenOptions::new().salvage(true).open(&path),
        Err(JournalError::Version { found: 2, .. })
    ));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), newer + &lines[1]);
}

#[test]
fn missing_and_malformed_header() {
    let (_d, path, lines) = base();
    write_with(&path, &[], lines[1].as_bytes(), &[]);
    assert_eq!(corrupt_at(&path, 1, 0), Corruption::MissingHeader);
    write_with(&path, &[], b"{\"journal\":{\"framing_tokens\":4}}\n", &[]);
    assert!(matches!(
        corrupt_at(&path, 1, 0),
        Corruption::InvalidHeader { .. }
    ));
    write_with(&path, &[], b"{\"journal\":{\"format\":1}}\n", &[]);
    assert!(matches!(
        corrupt_at(&path, 1, 0),
        Corruption::InvalidHeader { .. }
    ));
}

#[test]
fn second_header() {
    let (_d, path, lines) = base();
    assert_eq!(
        with_bad_fifth_line(&path, &lines, lines[0].as_bytes()),
        Corruption::UnexpectedHeader
    );
}

#[test]
fn ids_out_of_order() {
    let (_d, path, lines) = base();
    assert_eq!(
        with_bad_fifth_line(&path, &lines, entry_line(5, r#""fuzzy""#).as_bytes()),
        Corruption::Record(RecordError::IdOrder {
            expected: EntryId(3),
            found: EntryId(5)
        })
    );
    // A repeated id is out of order too.
    let offset = write_with(&path, &lines[..3], lines[2].as_bytes(), &[]);
    assert_eq!(
        corrupt_at(&path, 4, offset),
        Corruption::Record(RecordError::IdOrder {
            expected: EntryId(2),
            found: EntryId(1)
        })
    );
}

#[test]
fn summary_outside_a_compaction() {
    let (_d, path, lines) = base();
    let line = entry_line(3, r#""fuzzy""#).replace(
        r#""message""#,
        r#""kind":{"summary":{"replaces":[1]}},"message""#,
    );
    assert_eq!(
        with_bad_fifth_line(&path, &lines, line.as_bytes()),
        Corruption::Record(RecordError::Summary { id: EntryId(3) })
    );
}

#[test]
fn compaction_naming_unknown_ids() {
    let (_d, path, lines) = base();
    assert_eq!(
        with_bad_fifth_line(
            &path,
            &lines,
            b"{\"compaction\":{\"tier\":1,\"edits\":[{\"drop\":{\"id\":99}}]}}\n"
        ),
        Corruption::Record(RecordError::Compaction(ApplyError::NotInView {
            id: EntryId(99)
        }))
    );
    // The pinned entry (#0) is not in the view either.
    assert_eq!(
        with_bad_fifth_line(
            &path,
            &lines,
            b"{\"compaction\":{\"tier\":1,\"edits\":[{\"drop\":{\"id\":0}}]}}\n"
        ),
        Corruption::Record(RecordError::Compaction(ApplyError::NotInView {
            id: EntryId(0)
        }))
    );
}

#[test]
fn malformed_compaction() {
    let (_d, path, lines) = base();
    assert!(matches!(
        with_bad_fifth_line(&path, &lines, b"{\"compaction\":{\"tier\":1,\"edits\":[{\"shred\":{\"id\":1}}]}}\n"),
        Corruption::InvalidCompaction { message } if message.contains("shred")
    ));
}

#[test]
fn a_tier_0_compaction_is_refused() {
    let (_d, path, lines) = base();
    let bad = b"{\"compaction\":{\"tier\":0,\"edits\":[{\"drop\":{\"id\":1}}]}}\n";
    let problem = with_bad_fifth_line(&path, &lines, bad);
    assert!(matches!(problem, Corruption::InvalidCompaction { .. }));
    let message = "malformed compaction: invalid tier 0: tiers are numbered from 1";
    assert_eq!(problem.to_string(), message);
    // Tiers are numbered from 1: the same record at tier 1 loads.
    let good = String::from_utf8_lossy(bad).replace("\"tier\":0", "\"tier\":1");
    write_with(&path, &lines, good.as_bytes(), &[]);
    let h = JournaledHistory::open(&path).unwrap();
    assert_eq!(h.history().compactions()[0].tier.get(), 1);
}

#[test]
fn enormous_line_is_refused_on_read() {
    let (_d, path, lines) = base();
    let huge = format!("{{\"entry\":\"{}\"}}\n", "x".repeat(5000));
    let offset = write_with(&path, &lines, huge.as_bytes(), &[&lines[1]]);
    match OpenOptions::new().max_line_bytes(1024).open(&path) {
        Err(JournalError::Corrupt {
            line: 5,
            offset: o,
            problem: Corruption::LineTooLong { limit: 1024 },
            ..
        }) => assert_eq!(o, offset),
        other => panic!("{other:?}"),
    }
    // An enormous unterminated last line is too long, not a torn tail.
    let offset = write_with(&path, &lines, huge.trim_end().as_bytes(), &[]);
    assert!(matches!(
        OpenOptions::new().max_line_bytes(1024).open(&path),
        Err(JournalError::Corrupt { line: 5, offset: o, problem: Corruption::LineTooLong { .. }, .. }) if o == offset
    ));
    // A line of exactly the limit is accepted.
    let (_d2, path2, lines2) = base();
    let longest = lines2.iter().map(|l| l.len() - 1).max().unwrap();
    assert!(
        OpenOptions::new()
            .max_line_bytes(longest)
            .open(&path2)
            .is_ok()
    );
    assert!(matches!(
        OpenOptions::new().max_line_bytes(longest - 1).open(&path2),
        Err(JournalError::Corrupt {
            problem: Corruption::LineTooLong { .. },
            ..
        })
    ));
}

#[test]
fn enormous_record_is_refused_on_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.jsonl");
    let mut h = OpenOptions::new().max_line_bytes(512).open(&path).unwrap();
    let ok = h.append(fuzzy!(user: "short")).unwrap();
    let len = std::fs::metadata(&path).unwrap().len();
    let big = "y".repeat(1000);
    match h.append(fuzzy!(user: "{big}")) {
        Err(JournalError::RecordTooLong {
            len, limit: 512, ..
        }) => assert!(len > 1000),
        other => panic!("{other:?}"),
    }
    // Nothing was recorded or written; the next append gets the next id.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    assert_eq!(h.history().len(), 1);
    let next = h.append(fuzzy!(user: "short again")).unwrap();
    assert_eq!(next.0, ok.0 + 1);
    drop(h);
    assert_eq!(JournaledHistory::open(&path).unwrap().history().len(), 2);
}

#[test]
fn torn_tail_is_cut_and_reported() {
    let (_d, path, lines) = base();
    // The last record lost its end (killed mid-write).
    let torn = &lines[3][..lines[3].len() / 2];
    let offset = write_with(&path, &lines[..3], torn.as_bytes(), &[]);
    let mut h = JournaledHistory::open(&path).unwrap();
    let report = h.report().clone();
    assert_eq!(
        report.torn_tail,
        Some(favur_context::journal::TornTail {
            line: 4,
            offset,
            bytes: torn.len() as u64
        })
    );
    assert_eq!(report.records, 2);
    assert!(report.salvaged.is_none());
    assert_eq!(h.history().len(), 2);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), offset);
    // Appending continues from the cut, with the id the torn record would have had.
    let id = h.append(fuzzy!(assistant: "two, again")).unwrap();
    assert_eq!(id, EntryId(2));
    drop(h);
    let h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().is_clean());
    assert_eq!(
        h.history().recall(id).unwrap().message().text(),
        "two, again"
    );
}

#[test]
fn torn_tail_of_one_byte_and_of_the_header() {
    let (_d, path, lines) = base();
    let offset = write_with(&path, &lines, b"{", &[]);
    let h = JournaledHistory::open(&path).unwrap();
    assert_eq!(
        h.report()
            .torn_tail
            .as_ref()
            .map(|t| (t.line, t.offset, t.bytes)),
        Some((5, offset, 1))
    );
    assert_eq!(h.history().len(), 3);
    drop(h);
    // Killed while writing the header of a new journal: once it says `{"journal":`, it
    // is created afresh.
    write_with(&path, &[], &lines[0].as_bytes()[..20], &[]);
    let h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().created);
    assert_eq!(h.report().torn_tail.as_ref().map(|t| t.bytes), Some(20));
    assert!(h.history().is_empty());
    drop(h);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), lines[0]);
    // Shorter than that, it may be anyone's file (a lone `{`): refused, left as it is.
    let short = &lines[0].as_bytes()[..10];
    write_with(&path, &[], short, &[]);
    let err = JournaledHistory::open(&path).unwrap_err();
    assert!(
        matches!(
            err,
            JournalError::Corrupt {
                problem: Corruption::MissingHeader,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), short);
}

#[test]
fn salvage_loads_everything_before_the_damage_and_moves_the_rest_aside() {
    let (_d, path, lines) = base();
    let bad = "{\"entry\":oops}\n";
    let offset = write_with(&path, &lines[..3], bad.as_bytes(), &[&lines[3]]);
    assert!(matches!(
        JournaledHistory::open(&path),
        Err(JournalError::Corrupt { line: 4, .. })
    ));
    let mut h = OpenOptions::new().salvage(true).open(&path).unwrap();
    let salvaged = h.report().salvaged.clone().unwrap();
    assert_eq!((salvaged.line, salvaged.offset), (4, offset));
    assert!(matches!(salvaged.problem, Corruption::InvalidJson { .. }));
    assert_eq!(salvaged.bytes, (bad.len() + lines[3].len()) as u64);
    let moved = salvaged.moved_to.unwrap();
    assert_eq!(
        std::fs::read_to_string(&moved).unwrap(),
        format!("{bad}{}", lines[3])
    );
    assert!(
        moved
            .to_string_lossy()
            .ends_with(&format!("h.jsonl.damaged-{offset}"))
    );
    assert_eq!(h.history().len(), 2);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), offset);
    h.append(fuzzy!(user: "after salvage")).unwrap();
    drop(h);
    let h = JournaledHistory::open(&path).unwrap();
    assert!(h.report().is_clean());
    assert_eq!(h.history().len(), 3);
}

#[test]
fn salvage_twice_keeps_both_damaged_copies() {
    let (_d, path, lines) = base();
    let offset = write_with(&path, &lines, b"bad\n", &[]);
    let first = OpenOptions::new().salvage(true).open(&path).unwrap();
    let a = first.report().salvaged.clone().unwrap().moved_to.unwrap();
    drop(first);
    write_with(&path, &lines, b"bad again\n", &[]);
    let second = OpenOptions::new().salvage(true).open(&path).unwrap();
    let b = second.report().salvaged.clone().unwrap().moved_to.unwrap();
    assert_ne!(a, b);
    assert_eq!(std::fs::read_to_string(a).unwrap(), "bad\n");
    assert_eq!(std::fs::read_to_string(b).unwrap(), "bad again\n");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), offset);
}

#[test]
fn reader_reports_the_same_errors_without_a_file() {
    let (_d, _path, lines) = base();
    let mut text = lines.concat();
    let offset = text.len() as u64;
    text.push_str("{\"snapshot\":1}\n");
    match History::from_journal(text.as_bytes()) {
        Err(JournalError::Corrupt {
            line: 5,
            offset: o,
            problem: Corruption::UnknownRecord { kind },
            ..
        }) => assert_eq!((o, kind.as_str()), (offset, "snapshot")),
        other => panic!("{other:?}"),
    }
    let (history, report) = OpenOptions::new()
        .salvage(true)
        .read(text.as_bytes())
        .unwrap();
    assert_eq!(history.len(), 3);
    assert_eq!(
        report.salvaged.map(|s| (s.line, s.offset)),
        Some((5, offset))
    );
    // A torn tail read from a reader is left out and reported.
    let (history, report) = History::from_journal(&text.as_bytes()[..text.len() - 3]).unwrap();
    assert_eq!(history.len(), 3);
    assert_eq!(report.torn_tail.map(|t| t.offset), Some(offset));
}

#[test]
fn bad_batches_are_damage_and_load_nothing_of_the_batch() {
    let (_d, path, lines) = base();
    // The inner object of an entry record: `{"entry":<this>}`.
    let entry = |id: u64| {
        let line = entry_line(id, r#""fuzzy""#);
        let line = line.trim_end();
        line["{\"entry\":".len()..line.len() - 1].to_owned()
    };
    // Empty.
    assert_eq!(
        with_bad_fifth_line(&path, &lines, b"{\"batch\":[]}\n"),
        Corruption::EmptyBatch
    );
    // The second entry's id skips one: nothing of the batch loads, not even the first.
    let skip = format!("{{\"batch\":[{},{}]}}\n", entry(3), entry(5));
    assert_eq!(
        with_bad_fifth_line(&path, &lines, skip.as_bytes()),
        Corruption::Record(RecordError::IdOrder {
            expected: EntryId(4),
            found: EntryId(5)
        })
    );
    let (h, report) = OpenOptions::new()
        .salvage(true)
        .read(std::fs::File::open(&path).unwrap())
        .unwrap();
    assert_eq!((h.len(), report.records), (3, 3));
    // A summary inside a batch.
    let summary = entry(4).replace(
        r#""message""#,
        r#""kind":{"summary":{"replaces":[1]}},"message""#,
    );
    let line = format!("{{\"batch\":[{},{summary}]}}\n", entry(3));
    assert_eq!(
        with_bad_fifth_line(&path, &lines, line.as_bytes()),
        Corruption::Record(RecordError::Summary { id: EntryId(4) })
    );
    // The control: a good batch loads whole.
    let good = format!("{{\"batch\":[{},{}]}}\n", entry(3), entry(4));
    write_with(&path, &lines, good.as_bytes(), &[]);
    let h = JournaledHistory::open(&path).unwrap();
    assert_eq!(h.history().len(), 5);
    assert_eq!(h.report().records, 4);
}
