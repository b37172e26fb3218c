//! An example classifier for coding-agent shell transcripts: [`ShellCommandClassifier`].
//!
//! It is an example to start from, never used implicitly: pass it to an import
//! explicitly, or write your own [`Classifier`].
//!
//! | message | class | rule name |
//! |---|---|---|
//! | system prompt | strict | `system` |
//! | anything the person or the task wrote (user messages that are not observations) | strict | `task` |
//! | the assistant's turns (its reasoning and its commands) | fuzzy | `assistant` |
//! | output of listings and searches: `ls`, `find`, `grep`, `egrep`, `rg`, `ag`, `tree`, `wc`, `which`, `pwd`, `du`, `file`, `git status`, `git log`, `git grep`, `git ls-files`, `git branch`, `git show --stat` | forgettable | `listing` |
//! | output of test and script runs: `pytest`, `py.test`, `python`/`python3` (scripts, `-m`, `-c`), `tox`, `nox`, `make`, `cargo test`/`run`/`build`/`check`, `npm test`, `go test`, `./runtests.py`, `bin/test`, any `./script` | strict | `run` |
//! | output of file views: `cat`, `sed` without `-i`, `head`, `tail`, `nl`, `awk`, `less`, `more` | strict | `file-view` |
//! | output of anything else (edits such as `sed -i` and heredoc writes, `git diff`, installs, moves) and observations with no command | fuzzy | `other` |
//!
//! A command line is split on `&&`, `||`, `;` and newlines (heredoc bodies are skipped);
//! `cd`, `export`, `source` and `set` segments are ignored; in a pipeline the first
//! command decides, except that a file view piped into a search is a search. The class of
//! a command line is the strictest class of its segments.
//!
//! **Why file views are strict.** Agents edit by the exact lines they viewed: a `sed -i
//! 's/old/new/'` or a `str_replace` is built by copying a line from an earlier view, and
//! built from a summary it silently matches nothing. On the 16 runs in
//! `shared/traces` (1,317 commands), 20 of the 88 edit commands quote a line of 20 or more
//! characters verbatim from an earlier file view; the most recent view holding that line
//! is a median of 9 steps back (90th percentile 16, maximum 27), far longer than a view
//! stays in a window that compacts by class. File views are 22% of the output
//! characters, a real cost, which the replay tool of the next issue measures.
//!
//! ```
//! use favur_context::{History, Retention};
//! use favur_context::import::{self, Format, shell::ShellCommandClassifier};
//! let json = r#"[
//!   {"role": "user", "content": "Fix the bug."},
//!   {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"cd /repo && grep -rn foo src\"}"}}]},
//!   {"role": "tool", "tool_call_id": "c1", "content": "src/a.py:3: foo()"},
//!   {"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"python -m pytest tests/ -x\"}"}}]},
//!   {"role": "tool", "tool_call_id": "c2", "content": "1 failed"}
//! ]"#;
//! let mut h = History::new();
//! import::import(&mut h, Format::OpenAi, json, &ShellCommandClassifier).unwrap();
//! let classes: Vec<Retention> = h.entries().iter().map(|e| e.retention()).collect();
//! use Retention::*;
//! assert_eq!(classes, [Strict, Fuzzy, Forgettable, Fuzzy, Strict]);
//! assert_eq!(h.entries()[2].site().file(), "import:openai/listing");
//! ```

use super::{Classifier, Decision, IncomingMessage, Unclassified};
use crate::model::message::Role;
use crate::model::retention::Retention;

/// The example classifier for shell-command transcripts described in the
/// [module docs](self). It never declines a message.
///
/// ```
/// use favur_context::import::shell::ShellCommandClassifier;
/// use favur_context::Retention;
/// assert_eq!(ShellCommandClassifier::command_class("ls -la && grep -rn x ."), (Retention::Forgettable, "listing"));
/// assert_eq!(ShellCommandClassifier::command_class("sed -n '10,40p' a.py"), (Retention::Strict, "file-view"));
/// assert_eq!(ShellCommandClassifier::command_class("sed -i 's/a/b/' a.py"), (Retention::Fuzzy, "other"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShellCommandClassifier;

const LISTING: &[&str] = &[
    "ls", "find", "grep", "egrep", "fgrep", "rg", "ag", "tree", "wc", "which", "pwd", "du", "file",
    "locate", "whereis", "type",
];
const RUN: &[&str] = &[
    "pytest",
    "py.test",
    "python",
    "python3",
    "python2",
    "tox",
    "nox",
    "make",
    "npm",
    "yarn",
    "pnpm",
    "go",
    "node",
    "ruby",
    "rake",
    "bundle",
    "mvn",
    "gradle",
    "ctest",
    "bash",
    "sh",
    "sphinx-build",
    "django-admin",
    "coverage",
    "jest",
    "php",
    "perl",
];
const VIEW: &[&str] = &[
    "cat", "head", "tail", "nl", "awk", "less", "more", "bat", "view",
];
const IGNORED: &[&str] = &["cd", "export", "source", ".", "set", "unset", "true", ":"];

/// Removes heredoc bodies (the lines after `<<WORD` up to the line `WORD`).
fn strip_heredocs(command: &str) -> String {
    let mut out = String::with_capacity(command.len());
    let mut lines = command.lines();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if let Some(pos) = line.find("<<") {
            let rest = line[pos + 2..].trim_start_matches('-').trim_start();
            let word: String = rest
                .trim_start_matches(['\'', '"'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !word.is_empty() {
                for body in lines.by_ref() {
                    if body.trim() == word {
                        break;
                    }
                }
            }
        }
    }
    out
}

/// Splits on `&&`, `||`, `;` and newlines, outside quotes.
fn segments(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let chars: Vec<char> = command.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                cur.push(c);
            }
            None => {
                let next = chars.get(i + 1).copied();
                if c == '\'' || c == '"' {
                    quote = Some(c);
                    cur.push(c);
                } else if (c == '&' && next == Some('&')) || (c == '|' && next == Some('|')) {
                    out.push(std::mem::take(&mut cur));
                    i += 1;
                } else if c == ';' || c == '\n' {
                    out.push(std::mem::take(&mut cur));
                } else if c == '\\' && next == Some('\n') {
                    cur.push(' ');
                    i += 1;
                } else {
                    cur.push(c);
                }
            }
        }
        i += 1;
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The words of a simple command after assignments and wrappers (`sudo`, `timeout N`,
/// `env`, `time`, `(`).
fn words(simple: &str) -> Vec<&str> {
    let mut w: Vec<&str> = simple.split_whitespace().collect();
    loop {
        match w.first().copied() {
            Some("sudo" | "env" | "time" | "nohup" | "(" | "{" | "!") => {
                w.remove(0);
            }
            Some("timeout") => {
                w.remove(0);
                while w.first().is_some_and(|a| a.starts_with('-')) {
                    w.remove(0);
                }
                if !w.is_empty() {
                    w.remove(0);
                }
            }
            Some(a) if a.contains('=') && !a.starts_with('-') && !a.starts_with('=') => {
                w.remove(0);
            }
            Some(a) if a.starts_with('(') && a.len() > 1 => {
                w[0] = &a[1..];
            }
            _ => return w,
        }
    }
}

/// Class of one simple command (no pipes), or `None` for a command that does not count.
fn simple_class(simple: &str) -> Option<(Retention, &'static str)> {
    let w = words(simple);
    let first = *w.first()?;
    let program = first.rsplit('/').next().unwrap_or(first);
    if IGNORED.contains(&program) || program.starts_with('#') {
        return None;
    }
    let has = |flag: &str| w.iter().skip(1).any(|a| *a == flag || a.starts_with(flag));
    let listing = (Retention::Forgettable, "listing");
    let run = (Retention::Strict, "run");
    let view = (Retention::Strict, "file-view");
    let other = (Retention::Fuzzy, "other");
    Some(match program {
        "git" => match w.get(1).copied() {
            Some("status" | "log" | "grep" | "ls-files" | "branch") => listing,
            Some("show") if has("--stat") || has("--name-only") => listing,
            _ => other,
        },
        "cargo" => match w.get(1).copied() {
            Some("test" | "run" | "build" | "check" | "nextest" | "bench" | "clippy") => run,
            _ => other,
        },
        "sed" if has("-i") || has("--in-place") => other,
        "sed" => view,
        "cat" if simple.contains('>') => other,
        "pip" | "pip3" => other,
        p if LISTING.contains(&p) => listing,
        p if RUN.contains(&p) => run,
        p if VIEW.contains(&p) => view,
        _ if first.starts_with("./") || first.ends_with(".py") || first.ends_with(".sh") => run,
        _ if first.starts_with("bin/") || first.contains("runtests") => run,
        _ => other,
    })
}

/// Class of one segment (a pipeline).
fn segment_class(segment: &str) -> Option<(Retention, &'static str)> {
    let mut stages = segment.split('|').map(str::trim).filter(|s| !s.is_empty());
    let first = simple_class(stages.next()?)?;
    if first.1 == "file-view" {
        let searched = stages.any(|s| simple_class(s).is_some_and(|c| c.1 == "listing"));
        if searched {
            return Some((Retention::Forgettable, "listing"));
        }
    }
    Some(first)
}

impl ShellCommandClassifier {
    /// The class of a shell command line's output, and the rule name (`listing`, `run`,
    /// `file-view`, `other`): the strictest class of its segments, `other` (fuzzy) when
    /// no segment counts.
    ///
    /// ```
    /// use favur_context::import::shell::ShellCommandClassifier;
    /// use favur_context::Retention;
    /// let c = ShellCommandClassifier::command_class("cd /testbed && python reproduce.py 2>&1 | tail -5");
    /// assert_eq!(c, (Retention::Strict, "run"));
    /// let c = ShellCommandClassifier::command_class("cat -n src/a.py | grep -n 'def '");
    /// assert_eq!(c, (Retention::Forgettable, "listing"));
    /// let c = ShellCommandClassifier::command_class("cat <<'EOF' > t.py\nimport os\nEOF");
    /// assert_eq!(c, (Retention::Fuzzy, "other"));
    /// ```
    pub fn command_class(command: &str) -> (Retention, &'static str) {
        let stripped = strip_heredocs(command);
        segments(&stripped)
            .iter()
            .filter_map(|s| segment_class(s))
            .max_by_key(|(r, _)| *r)
            .unwrap_or((Retention::Fuzzy, "other"))
    }
}

impl Classifier for ShellCommandClassifier {
    fn classify(&self, message: &IncomingMessage<'_>) -> Result<Decision, Unclassified> {
        let (retention, rule) = match message.role() {
            Role::System => (Retention::Strict, "system"),
            Role::Assistant => (Retention::Fuzzy, "assistant"),
            Role::User | Role::Tool if message.is_result() => match message.command() {
                Some(command) => Self::command_class(command),
                None => (Retention::Fuzzy, "other"),
            },
            Role::User | Role::Tool => (Retention::Strict, "task"),
        };
        Ok(Decision::from(retention).with_rule(rule))
    }
}
