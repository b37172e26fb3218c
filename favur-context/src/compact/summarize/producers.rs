//! What produced each entry of a run, as a summary's header says it: the tool and its
//! command or arguments, or the command of the plain-chat turn an observation answers.

use std::borrow::Cow;

use foldhash::HashMap;

use crate::model::entry::{Entry, EntryId};
use crate::model::message::{Arguments, Role, ToolCall};

/// What produced each entry of a run: the calls of the run and of its context, and the
/// fenced commands of assistant turns for plain-chat observations.
pub(super) struct Producers<'a> {
    /// Each call by id, with the entry that made it and whether that entry is in the run.
    calls: HashMap<&'a str, (&'a ToolCall, EntryId, bool)>,
    /// Assistant turns (members and context) by id, with their fenced command if any and
    /// whether they are in the run.
    turns: Vec<(EntryId, Option<&'a str>, bool)>,
}

/// What produced an entry, as its header says it.
pub(super) enum Producer<'a> {
    /// A call (or a command) made in an entry of the same summary, shown just above.
    Above(EntryId, &'a str),
    /// A call or a command the summary does not show: named in full.
    Named(&'a str, String),
}

impl<'a> Producers<'a> {
    pub(super) fn new(entries: &[&'a Entry], context: &[&'a Entry]) -> Self {
        let mut calls = HashMap::default();
        let mut turns = Vec::new();
        let members = context
            .iter()
            .map(|e| (e, false))
            .chain(entries.iter().map(|e| (e, true)));
        for (e, member) in members {
            if e.message().role != Role::Assistant || e.kind().is_summary() {
                continue;
            }
            for c in e.message().tool_calls() {
                calls.insert(c.id.as_str(), (c, e.id(), member));
            }
            let cmd = e
                .message()
                .parts
                .iter()
                .find_map(|p| p.text().and_then(fenced_command));
            turns.push((e.id(), cmd, member));
        }
        turns.sort_by_key(|t| t.0);
        Producers { calls, turns }
    }

    /// What made the call `id`.
    pub(super) fn call(&self, id: &str, limit: usize) -> Option<Producer<'a>> {
        let &(c, at, member) = self.calls.get(id)?;
        Some(if member {
            Producer::Above(at, &c.name)
        } else {
            Producer::Named(&c.name, command_line(c, limit))
        })
    }

    /// Whether the assistant turn right before `e` has a fenced command
    /// ([`Producers::command_before`] is some, without writing it).
    pub(super) fn has_command_before(&self, e: &Entry) -> bool {
        self.turn_before(e).is_some_and(|t| t.1.is_some())
    }

    /// The assistant turn right before `e`, if any: its id, fenced command and whether
    /// it is a member of the run.
    fn turn_before(&self, e: &Entry) -> Option<&(EntryId, Option<&'a str>, bool)> {
        let at = self.turns.partition_point(|t| t.0 < e.id());
        self.turns.get(at.checked_sub(1)?)
    }

    /// The fenced command of the assistant turn right before `e` (a plain-chat
    /// observation answers it).
    pub(super) fn command_before(&self, e: &Entry) -> Option<Producer<'a>> {
        let &(turn, cmd, member) = self.turn_before(e)?;
        let cmd = cmd?;
        Some(if member {
            Producer::Above(turn, "")
        } else {
            Producer::Named("", one_line(cmd, 160))
        })
    }

    /// The command that produced `e`, as typed: the shell command of the call a result
    /// answers, or the fenced command of the plain-chat turn an observation answers.
    pub(super) fn command_of(&self, e: &Entry) -> Option<&'a str> {
        let m = e.message();
        if m.role == Role::User {
            return self.turn_before(e).and_then(|t| t.1);
        }
        let id = m.parts.iter().find_map(|p| match p {
            crate::model::message::Part::ToolResult(r) => Some(r.call_id.as_str()),
            _ => None,
        })?;
        let &(c, _, _) = self.calls.get(id)?;
        match &c.arguments {
            Arguments::Json(v) => ["command", "cmd", "script"]
                .iter()
                .find_map(|k| v.get(*k).and_then(|s| s.as_str())),
            Arguments::Invalid(_) => None,
        }
    }
}

/// Where the first ```` ``` ```` of `s` starts (`str::find` builds a substring searcher
/// for each call).
pub(super) fn find_fence(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    memchr::memchr_iter(b'`', b).find(|&i| b[i..].starts_with(b"```"))
}

/// The first fenced shell block of a text (```` ```bash ````, ```` ```sh ````,
/// ```` ```shell ````, ```` ```console ````); a bare fence is not taken for a command (it
/// may quote a traceback).
pub(super) fn fenced_command(text: &str) -> Option<&str> {
    let mut rest = text;
    while let Some(p) = find_fence(rest) {
        let after = &rest[p + 3..];
        let nl = after.find('\n')?;
        let lang = after[..nl].trim();
        let body = &after[nl + 1..];
        let end = find_fence(body)?;
        if matches!(lang, "bash" | "sh" | "shell" | "console") {
            let cmd = body[..end].trim();
            if !cmd.is_empty() {
                return Some(cmd);
            }
        }
        rest = &body[end + 3..];
    }
    None
}

/// A call's command or arguments on one line: the command of a shell call, the value of
/// a call with one string argument (`read_file src/a.rs`), else `key=value` pairs.
pub(super) fn command_line(c: &ToolCall, limit: usize) -> String {
    let v = match &c.arguments {
        Arguments::Json(v) => v,
        Arguments::Invalid(raw) => return one_line(raw, limit),
    };
    let Some(obj) = v.as_object() else {
        return one_line(&v.to_string(), limit);
    };
    for key in ["command", "cmd", "script"] {
        if let Some(s) = obj.get(key).and_then(|s| s.as_str()) {
            return one_line(s, limit);
        }
    }
    let strings: Vec<&str> = obj.values().filter_map(|v| v.as_str()).collect();
    if obj.len() == 1 && strings.len() == 1 {
        return one_line(strings[0], limit);
    }
    let pairs: Vec<String> = obj
        .iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) => format!("{k}={s}"),
            None => format!("{k}={v}"),
        })
        .collect();
    one_line(&pairs.join(" "), limit)
}

/// `s` on one line (its lines joined with ` ⏎ `; a here-document only by its first line),
/// cut at `limit` bytes; `…` marks what was left out.
pub(super) fn one_line(s: &str, limit: usize) -> String {
    let s = s.trim();
    if let Some((first, _)) = s.split_once('\n')
        && super::text::find_str(first, "<<").is_some()
    {
        let mut out = cut(first.trim(), limit);
        out.push_str(" …");
        return out;
    }
    let mut joined = String::with_capacity(s.len().min(limit + 8));
    for (i, line) in s
        .trim()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        if i > 0 {
            joined.push_str(" ⏎ ");
        }
        joined.push_str(line);
        if joined.len() > limit {
            break;
        }
    }
    cut(&joined, limit)
}

/// `s` cut at `limit` bytes (on a character boundary), with `…` if cut; control
/// characters become spaces.
pub(super) fn cut(s: &str, limit: usize) -> String {
    cut_borrowed(s, limit).into_owned()
}

/// [`cut`], borrowing `s` when it is kept as it is (short enough, no control characters).
pub(super) fn cut_borrowed(s: &str, limit: usize) -> Cow<'_, str> {
    let mut end = s.len().min(limit);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let kept = &s[..end];
    // Control characters are U+0000-U+001F, U+007F and U+0080-U+009F (`C2 80`-`C2 9F`
    // in UTF-8): text without those bytes is copied as it is.
    // Every byte tested without a branch (the compiler tests many at once).
    let plain = kept.bytes().fold(0u8, |bad, b| {
        bad | u8::from((b < 0x20) | (b == 0x7f) | (b == 0xc2))
    }) == 0;
    if plain && end == s.len() {
        return Cow::Borrowed(kept);
    }
    let mut out = String::with_capacity(end + '…'.len_utf8());
    if plain {
        out.push_str(kept);
    } else {
        out.extend(kept.chars().map(|c| if c.is_control() { ' ' } else { c }));
    }
    if end < s.len() {
        out.push('…');
    }
    Cow::Owned(out)
}

/// [`cut_borrowed`] of a text that may be borrowed or owned.
pub(super) fn cut_cow(s: Cow<'_, str>, limit: usize) -> Cow<'_, str> {
    match s {
        Cow::Borrowed(b) => cut_borrowed(b, limit),
        Cow::Owned(o) => Cow::Owned(cut(&o, limit)),
    }
}

/// Whether `command` lists directories recursively (`ls -R`, `ls -laR src`): its names
/// come under `dir:` headers.
pub(super) fn is_recursive_listing(command: &str) -> bool {
    let mut words = command
        .split_whitespace()
        .skip_while(|w| *w != "ls")
        .skip(1);
    words.any(|w| {
        w == "--recursive" || (w.starts_with('-') && !w.starts_with("--") && w.contains('R'))
    })
}

/// Whether `line` is what a command that prints files says of its own (`cat: a.py: No
/// such file or directory`, `sed: -e expression #1`), not a line of the file.
pub(super) fn is_tool_message(line: &str) -> bool {
    const TOOLS: [&str; 5] = ["cat: ", "head: ", "tail: ", "sed: ", "nl: "];
    TOOLS.iter().any(|t| line.starts_with(t))
}

/// The last command of a list (`cd x && sed -n ...`: the `sed`), trimmed.
pub(super) fn last_command(command: &str) -> Option<&str> {
    command
        .rsplit(['\n', ';'])
        .next()
        .and_then(|s| s.rsplit("&&").next())
        .map(str::trim)
}

/// Whether `command` searches files for lines (`grep`, `egrep`, `rg`, `git grep`): what
/// its last command of a list starts with.
pub(super) fn is_search(command: &str) -> bool {
    let last = last_command(command).unwrap_or("");
    let mut words = last.split_whitespace();
    match words.next() {
        Some("grep" | "egrep" | "fgrep" | "rg") => true,
        Some("git") => words.next() == Some("grep"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_spaces_and_plain_text_is_borrowed() {
        assert!(matches!(
            cut_borrowed("plain text", 80),
            Cow::Borrowed("plain text")
        ));
        for (text, shown) in [
            ("a\tb", "a b"),
            ("a\u{7f}b", "a b"),
            ("a\u{85}b", "a b"),
            ("a\u{1b}[31mred", "a [31mred"),
            ("é ü", "é ü"),
        ] {
            assert_eq!(cut_borrowed(text, 80), shown, "{text:?}");
        }
        // Not control characters, kept: U+00C2 (`C3 82`), and U+00A0 (a no-break space,
        // `C2 A0`, whose first byte is that of the C1 controls).
        assert!(matches!(cut_borrowed("Â", 80), Cow::Borrowed("Â")));
        assert_eq!(cut_borrowed("a\u{a0}b", 80), "a\u{a0}b");
        assert_eq!(cut_borrowed("abcdef", 3), "abc…");
    }

    #[test]
    fn a_fence_is_found_where_a_substring_search_finds_it() {
        for s in [
            "",
            "`",
            "``",
            "```",
            "a``b```c",
            "````",
            "é```",
            "`` ``` ```",
            "no fence",
            "x\n```bash\nls\n```\n",
        ] {
            assert_eq!(find_fence(s), s.find("```"), "{s:?}");
        }
        assert_eq!(
            fenced_command("THOUGHT\n```bash\nls -la\n```"),
            Some("ls -la")
        );
    }
}
