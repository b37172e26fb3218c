//! The records of a journal line by line: what is written ([`RecordOut`]), what is read
//! ([`RecordIn`]), the header, and what is wrong with a line that does not parse.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::JOURNAL_FORMAT;
use super::error::Corruption;
use crate::history::view::Compaction;
use crate::model::entry::{Entry, EntryId};
use crate::model::retention::Retention;

/// The first line of every journal.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Header {
    pub(crate) format: u32,
    pub(crate) framing_tokens: u32,
    /// The token counter's id ([`TokenCounter::id`](crate::tokens::TokenCounter::id)); absent in
    /// older journals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) counter: Option<String>,
    /// A sealed journal's chain id (see `sealed`); absent in an unsealed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) seal: Option<String>,
}

/// One line to write.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RecordOut<'a> {
    Journal(Header),
    /// One entry appended or pinned.
    Entry(&'a Entry),
    /// Several entries recorded all or none: one line, so one write.
    Batch(&'a [Entry]),
    /// One or more entries recorded all or none under an idempotency key.
    Keyed {
        key: &'a str,
        entries: &'a [Entry],
    },
    Compaction(&'a Compaction),
    /// The request overhead from here on (see
    /// [`History::set_request_overhead_tokens`](crate::History::set_request_overhead_tokens)).
    RequestOverhead(RequestOverhead),
}

/// The tokens every request carries beyond its messages, as a record
/// (`{"request_overhead":{"tokens":291}}`): it takes no id, and replaying it sets the
/// history's overhead, so a reopened store budgets as the one that wrote it. Journals and
/// rows written before it existed hold none and reopen with 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RequestOverhead {
    pub(crate) tokens: u64,
}

impl<'a> RecordOut<'a> {
    /// The record of one write: its entries, under its key if it has one.
    pub(crate) fn of(entries: &'a [Entry], key: Option<&'a str>) -> RecordOut<'a> {
        match (key, entries) {
            (Some(key), entries) => RecordOut::Keyed { key, entries },
            (None, [one]) => RecordOut::Entry(one),
            (None, all) => RecordOut::Batch(all),
        }
    }
}

/// One line read.
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RecordIn {
    Journal(#[allow(dead_code)] Value),
    Entry(Entry),
    Batch(Vec<Entry>),
    Keyed { key: String, entries: Vec<Entry> },
    Compaction(Compaction),
    RequestOverhead(RequestOverhead),
}

pub(super) enum LineError {
    Version(u64),
    /// The header names another token counter (its id).
    Counter(String),
    Corrupt(Corruption),
    /// A sealed journal's line does not verify, or the seal and the key disagree.
    Tampered(crate::store_trait::seal::Tamper),
}

impl From<Corruption> for LineError {
    fn from(c: Corruption) -> Self {
        LineError::Corrupt(c)
    }
}

/// Parses the header line and returns the framing tokens and the counter it declares.
pub(super) fn header(content: &[u8]) -> Result<(u32, Option<String>), LineError> {
    let value: Value = serde_json::from_slice(content).map_err(|e| syntax(content, &e))?;
    let Some(inner) = value.as_object().and_then(|o| o.get("journal")) else {
        return Err(Corruption::MissingHeader.into());
    };
    let Some(format) = inner.get("format").and_then(Value::as_u64) else {
        return Err(Corruption::InvalidHeader {
            message: "no integer `format`".into(),
        }
        .into());
    };
    if format != u64::from(JOURNAL_FORMAT) {
        return Err(LineError::Version(format));
    }
    let header: Header = Header::deserialize(inner).map_err(|e| Corruption::InvalidHeader {
        message: e.to_string(),
    })?;
    Ok((header.framing_tokens, header.counter))
}

/// The chain id a sealed journal's header record names (`"seal":"<id>"`), if any.
pub(super) fn header_seal(content: &[u8]) -> Option<String> {
    let value: Value = serde_json::from_slice(content).ok()?;
    let id = value.get("journal")?.get("seal")?.as_str()?;
    Some(id.to_owned())
}

/// Says what is wrong with a line that did not parse as a record.
pub(super) fn diagnose(content: &[u8], error: &serde_json::Error) -> Corruption {
    let value: Value = match serde_json::from_slice(content) {
        Ok(v) => v,
        Err(e) => return syntax(content, &e),
    };
    let Some(object) = value.as_object() else {
        return Corruption::NotARecord;
    };
    let mut keys = object.iter();
    let (Some((kind, inner)), None) = (keys.next(), keys.next()) else {
        return Corruption::NotARecord;
    };
    match kind.as_str() {
        "entry" => diagnose_entry(inner, error),
        "batch" => match inner.as_array() {
            None => Corruption::InvalidEntry {
                id: None,
                message: "a batch record is not an array of entries".into(),
            },
            Some(entries) => entries
                .iter()
                .find_map(|e| {
                    let bad = Entry::deserialize(e).is_err();
                    bad.then(|| diagnose_entry(e, error))
                })
                .unwrap_or_else(|| Corruption::InvalidEntry {
                    id: None,
                    message: error.to_string(),
                }),
        },
        "keyed" => match inner.get("entries").and_then(Value::as_array) {
            Some(entries) if inner.get("key").is_some_and(Value::is_string) => entries
                .iter()
                .find(|e| Entry::deserialize(*e).is_err())
                .map(|e| diagnose_entry(e, error))
                .unwrap_or_else(|| Corruption::InvalidEntry {
                    id: None,
                    message: error.to_string(),
                }),
            _ => Corruption::InvalidEntry {
                id: None,
                message: "a keyed record is not a string `key` and an array of `entries`".into(),
            },
        },
        "compaction" => Corruption::InvalidCompaction {
            message: Compaction::deserialize(inner)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| error.to_string()),
        },
        "journal" => Corruption::UnexpectedHeader,
        "request_overhead" => Corruption::InvalidRequestOverhead {
            message: error.to_string(),
        },
        other => Corruption::UnknownRecord {
            kind: other.to_owned(),
        },
    }
}

/// Says what is wrong with an entry record's value.
fn diagnose_entry(inner: &Value, error: &serde_json::Error) -> Corruption {
    let id = inner.get("id").and_then(Value::as_u64).map(EntryId);
    match inner.get("retention") {
        None => Corruption::MissingClass { id },
        Some(r) if Retention::deserialize(r).is_err() => Corruption::UnknownClass {
            id,
            found: r.to_string(),
        },
        Some(_) => Corruption::InvalidEntry {
            id,
            message: Entry::deserialize(inner)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_else(|| error.to_string()),
        },
    }
}

/// Invalid UTF-8 or invalid JSON.
pub(super) fn syntax(content: &[u8], error: &serde_json::Error) -> Corruption {
    match std::str::from_utf8(content) {
        Err(e) => Corruption::InvalidUtf8 {
            valid_up_to: e.valid_up_to(),
        },
        Ok(_) => Corruption::InvalidJson {
            message: error.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::entry::EntryKind;
    use crate::model::site::CallSite;

    fn problem(line: &str) -> Corruption {
        let bytes = line.as_bytes();
        let err = serde_json::from_slice::<RecordIn>(bytes)
            .err()
            .expect("a bad record");
        diagnose(bytes, &err)
    }

    #[test]
    fn diagnose_names_each_kind_of_bad_record() {
        assert!(matches!(problem("{"), Corruption::InvalidJson { .. }));
        assert_eq!(problem("42"), Corruption::NotARecord);
        assert_eq!(problem(r#"{"a":1,"b":2}"#), Corruption::NotARecord);
        assert_eq!(
            problem(r#"{"blob":{}}"#),
            Corruption::UnknownRecord {
                kind: "blob".into()
            }
        );
        assert_eq!(
            problem(r#"{"entry":{"id":4}}"#),
            Corruption::MissingClass {
                id: Some(EntryId(4))
            }
        );
        assert_eq!(
            problem(r#"{"entry":{"retention":7}}"#),
            Corruption::UnknownClass {
                id: None,
                found: "7".into()
            }
        );
        assert!(matches!(
            problem(r#"{"entry":{"id":1,"retention":"strict"}}"#),
            Corruption::InvalidEntry { id: Some(EntryId(1)), message } if message.contains("missing field")
        ));
        assert!(matches!(
            problem(r#"{"compaction":{"tier":"x","edits":[]}}"#),
            Corruption::InvalidCompaction { .. }
        ));
        assert_eq!(
            problem(r#"{"batch":[{"id":2,"retention":"eternal"}]}"#),
            Corruption::UnknownClass {
                id: Some(EntryId(2)),
                found: r#""eternal""#.into()
            }
        );
        assert!(matches!(
            problem(r#"{"batch":{"id":2}}"#),
            Corruption::InvalidEntry { id: None, .. }
        ));
    }

    #[test]
    fn invalid_utf8_is_told_apart_from_invalid_json() {
        let bytes = b"{\"entry\":\"a\xc3\x28\"}";
        let err = serde_json::from_slice::<RecordIn>(bytes).err().unwrap();
        assert_eq!(
            diagnose(bytes, &err),
            Corruption::InvalidUtf8 { valid_up_to: 11 }
        );
    }

    #[test]
    fn header_versions() {
        assert!(matches!(
            header(br#"{"journal":{"format":1,"framing_tokens":2}}"#),
            Ok((2, None))
        ));
        assert!(matches!(
            header(br#"{"journal":{"format":1,"framing_tokens":2,"counter":"c/1"}}"#),
            Ok((2, Some(c))) if c == "c/1"
        ));
        assert!(matches!(
            header(br#"{"journal":{"format":18446744073709551615}}"#),
            Err(LineError::Version(u64::MAX))
        ));
        assert!(matches!(
            header(br#"{"journal":{"format":0,"framing_tokens":2}}"#),
            Err(LineError::Version(0))
        ));
        assert!(matches!(
            header(br#"{"entry":{}}"#),
            Err(LineError::Corrupt(Corruption::MissingHeader))
        ));
        assert!(matches!(
            header(br#"{"journal":{"format":"1"}}"#),
            Err(LineError::Corrupt(Corruption::InvalidHeader { .. }))
        ));
    }

    #[test]
    fn records_written_are_records_read() {
        let entry = Entry::new(
            EntryId(0),
            Retention::Strict,
            3,
            CallSite::new("a.rs", 1, 2),
            EntryKind::Pinned,
            crate::model::message::Message::system("sys"),
        );
        let line = serde_json::to_vec(&RecordOut::Entry(&entry)).unwrap();
        match serde_json::from_slice::<RecordIn>(&line).unwrap() {
            RecordIn::Entry(e) => assert_eq!(e, entry),
            _ => panic!("not an entry"),
        }
        let two = [entry.clone(), entry.clone()];
        let line = serde_json::to_vec(&RecordOut::Batch(&two)).unwrap();
        assert!(line.starts_with(br#"{"batch":[{"id":0,"#));
        match serde_json::from_slice::<RecordIn>(&line).unwrap() {
            RecordIn::Batch(b) => assert_eq!(b, two),
            _ => panic!("not a batch"),
        }
        let header = serde_json::to_string(&RecordOut::Journal(Header {
            format: JOURNAL_FORMAT,
            framing_tokens: 4,
            counter: Some("heuristic/v1".into()),
            seal: None,
        }))
        .unwrap();
        assert_eq!(
            header,
            r#"{"journal":{"format":1,"framing_tokens":4,"counter":"heuristic/v1"}}"#
        );
    }
}
