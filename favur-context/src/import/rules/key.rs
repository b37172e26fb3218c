//! Supersession keys read off a command: the file it reads or writes (and the part of it
//! it shows), or the command itself. Linear in the command, no regex.

use crate::model::classify::KeyPart;

use super::{MessageFacts, RuleRef, Rules};

impl Rules {
    /// The [supersession key](crate::Classified::with_key) `rule` gives the message of
    /// `facts` (see the format's `key`): `None` when the rule names none or the command
    /// holds no path.
    ///
    /// ```
    /// use favur_context::import::rules::{MessageFacts, RuleRef, Rules};
    /// use favur_context::Role;
    /// let rules = Rules::from_toml("[[rule]]\nname = \"views\"\nkey = \"path\"\nclass = \"strict\"\n")?;
    /// let facts = MessageFacts::new(4, Role::Tool).with_command("cd /repo && sed -n '10,40p' src/app.py");
    /// assert_eq!(rules.key_for(RuleRef::Rule(0), &facts).as_deref(), Some("src/app.py"));
    /// # Ok::<(), favur_context::import::rules::RulesError>(())
    /// ```
    pub fn key_for(&self, rule: RuleRef, facts: &MessageFacts<'_>) -> Option<String> {
        let command = facts.command?;
        match self.key_from(rule)? {
            KeyFrom::Path => path_of(command),
            KeyFrom::Command => command_of(command),
        }
    }

    /// The [part](crate::Classified::with_key_part) of its file that the message of
    /// `facts` shows, for a rule whose key is `"path"`: `None` for the whole file (or no
    /// such key).
    ///
    /// ```
    /// use favur_context::import::rules::{MessageFacts, RuleRef, Rules};
    /// use favur_context::message::KeyPart;
    /// use favur_context::Role;
    /// let rules = Rules::from_toml("[[rule]]\nname = \"views\"\nkey = \"path\"\nclass = \"strict\"\n")?;
    /// let part = |c| rules.key_part_for(RuleRef::Rule(0), &MessageFacts::new(4, Role::Tool).with_command(c));
    /// assert_eq!(part("nl -ba src/app.py | sed -n '10,40p'"), Some(KeyPart::Lines(10, 40)));
    /// assert_eq!(part("tail -n 20 src/app.py"), Some(KeyPart::Unknown));
    /// assert_eq!(part("cat src/app.py"), None);
    /// # Ok::<(), favur_context::import::rules::RulesError>(())
    /// ```
    pub fn key_part_for(&self, rule: RuleRef, facts: &MessageFacts<'_>) -> Option<KeyPart> {
        match self.key_from(rule)? {
            KeyFrom::Path => part_of(facts.command?),
            KeyFrom::Command => None,
        }
    }

    fn key_from(&self, rule: RuleRef) -> Option<KeyFrom> {
        let RuleRef::Rule(i) = rule else {
            return None;
        };
        self.rules.get(i)?.key
    }
}

/// What a rule's `key` is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyFrom {
    /// The file the command reads or writes.
    Path,
    /// The command, whitespace-normalised.
    Command,
}

/// The command's first line with its words joined by single spaces, less a leading
/// `cd DIR &&`; `None` when nothing is left.
pub(crate) fn command_of(command: &str) -> Option<String> {
    let words: Vec<&str> = first_line(command)?.split_whitespace().collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The file the command reads or writes: the target of a `>` redirection, else the last
/// word of its first pipeline stage that looks like a path (not an option, not a sed or
/// awk program, holding a `.` or a `/`). `None` when there is none.
pub(crate) fn path_of(command: &str) -> Option<String> {
    let stage = *stages(first_line(command)?).first()?;
    let words = words(stage);
    if let Some(at) = words.iter().position(|w| *w == ">" || *w == ">>") {
        return words.get(at + 1).map(|w| unquote(w).to_owned());
    }
    if let Some(w) = words
        .iter()
        .find_map(|w| w.strip_prefix(">>").or(w.strip_prefix('>')))
    {
        return (!w.is_empty()).then(|| unquote(w).to_owned());
    }
    words
        .iter()
        .skip(1)
        .rev()
        .map(|w| unquote(w))
        .find(|w| looks_like_path(w))
        .map(str::to_owned)
}

/// The part of its file the command's first line shows, stage by stage of its pipeline:
/// `sed -n 'A,Bp'` (or `'Ap'`) shows lines A to B, `head` the first N, a `head` after a
/// range the start of it; `tail`, a search or any other filter an unknown part. `None`
/// when every stage passes the whole file on (`cat`, `nl`, an edit).
pub(crate) fn part_of(command: &str) -> Option<KeyPart> {
    let mut part: Option<KeyPart> = None;
    for stage in stages(first_line(command)?) {
        let words = words(stage);
        let Some(&program) = words.first() else {
            continue;
        };
        let shown = match program.rsplit('/').next().unwrap_or(program) {
            "sed" if words.iter().any(|w| quiet_flag(w)) => sed_lines(&words),
            "head" => head_lines(&words),
            "tail" | "grep" | "egrep" | "fgrep" | "rg" | "ag" | "awk" | "cut" | "sort" | "uniq"
            | "wc" | "tr" => Some(KeyPart::Unknown),
            _ => None,
        };
        part = match (part, shown) {
            (p, None) => p,
            (None, s) => s,
            (Some(KeyPart::Lines(a, b)), Some(KeyPart::Lines(1, n))) => {
                Some(KeyPart::Lines(a, b.min(a.saturating_add(n - 1))))
            }
            _ => Some(KeyPart::Unknown),
        };
    }
    part
}

/// Whether `w` asks `sed` to print only what its program prints: `-n` alone or in a
/// cluster of short options (`-ne`, `-En`), `--quiet`, `--silent`.
fn quiet_flag(w: &str) -> bool {
    match w.strip_prefix("--") {
        Some(long) => long == "quiet" || long == "silent",
        None => w.strip_prefix('-').is_some_and(|short| {
            short.contains('n') && short.bytes().all(|b| b.is_ascii_alphabetic())
        }),
    }
}

/// The lines `sed -n PROGRAM` prints: `A,Bp` or `Ap`; anything else (more than one
/// program, a pattern) an unknown part.
fn sed_lines(words: &[&str]) -> Option<KeyPart> {
    if words.iter().filter(|w| **w == "-e").count() > 1 {
        return Some(KeyPart::Unknown);
    }
    let program = words[1..]
        .iter()
        .map(|w| unquote(w))
        .find(|w| !w.starts_with('-'));
    let lines = program.and_then(|p| p.strip_suffix('p')).and_then(|r| {
        let (a, b) = r.split_once(',').unwrap_or((r, r));
        Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?))
    });
    Some(match lines {
        Some((a, b)) if 1 <= a && a <= b => KeyPart::Lines(a, b),
        _ => KeyPart::Unknown,
    })
}

/// The lines `head` prints: `-n N`, `-nN`, `-N`, `--lines=N`, 10 by default; bytes
/// (`-c`) or a count from the end (`-n -N`) an unknown part.
fn head_lines(words: &[&str]) -> Option<KeyPart> {
    let mut n: Option<u64> = Some(10);
    let mut it = words[1..].iter().map(|w| unquote(w));
    while let Some(w) = it.next() {
        n = match w {
            "-n" | "--lines" => it.next().and_then(|v| v.parse().ok()),
            _ if w.starts_with("-c") || w.starts_with("--bytes") => None,
            _ => match w.strip_prefix("--lines=").or(w.strip_prefix("-n")) {
                Some(v) => v.parse().ok(),
                None => match w.strip_prefix('-') {
                    Some(v) => v.parse().ok(),
                    None => n,
                },
            },
        };
    }
    Some(match n {
        Some(n) if n >= 1 => KeyPart::Lines(1, n),
        _ => KeyPart::Unknown,
    })
}

/// The stages of the pipeline `line` starts with: the text between `|`s outside quotes,
/// up to the first `||`, `;`, `&&` or `<<` (another command, or a heredoc's body).
fn stages(line: &str) -> Vec<&str> {
    let bytes = line.as_bytes();
    let (mut out, mut start, mut quote) = (Vec::new(), 0, None::<u8>);
    let mut end = line.len();
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'|' | b'&' | b'<') if bytes.get(i + 1) == Some(&b) => {
                end = i;
                break;
            }
            (None, b';') => {
                end = i;
                break;
            }
            (None, b'|') => {
                out.push(&line[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&line[start..end]);
    out
}

/// The command's first line that holds something, less a leading `cd DIR &&`.
fn first_line(command: &str) -> Option<&str> {
    let line = command.lines().find(|l| !l.trim().is_empty())?;
    let t = line.trim_start();
    Some(match (t.strip_prefix("cd "), t.find("&&")) {
        (Some(_), Some(at)) => t[at + 2..].trim_start(),
        _ => t,
    })
}

/// Words split on whitespace outside quotes (quotes kept).
fn words(stage: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut quote: Option<char> = None;
    let mut start: Option<usize> = None;
    for (i, c) in stage.char_indices() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => {
                quote = Some(c);
                start.get_or_insert(i);
            }
            (None, c) if c.is_whitespace() => {
                if let Some(s) = start.take() {
                    out.push(&stage[s..i]);
                }
            }
            _ => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        out.push(&stage[s..]);
    }
    out
}

fn unquote(w: &str) -> &str {
    let w = w.trim_matches(|c| c == '\'' || c == '"');
    w.strip_prefix("./").unwrap_or(w)
}

fn looks_like_path(w: &str) -> bool {
    !w.is_empty()
        && !w.starts_with('-')
        && (w.contains('/') || w.contains('.'))
        && !w.contains(char::is_whitespace)
        && !w.contains(['{', '}', '$', '(', ')', '=', ','])
        && !w
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b',')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_and_edits_of_a_file_share_its_path() {
        let same = [
            "cat src/app.py",
            "cd /repo && sed -n '10,40p' src/app.py",
            "nl -ba src/app.py | sed -n '1,80p'",
            "sed -i 's/old name/new_name/' src/app.py",
            "cat > src/app.py <<'EOF'\nprint(1)\nEOF",
            "head -n 50 ./src/app.py",
        ];
        for c in same {
            assert_eq!(path_of(c).as_deref(), Some("src/app.py"), "{c}");
        }
        assert_eq!(path_of("ls -la"), None);
        assert_eq!(path_of("echo hi"), None);
        assert_eq!(
            path_of("awk '{print $1}' data.csv").as_deref(),
            Some("data.csv")
        );
    }

    #[test]
    fn the_part_of_a_file_a_view_shows() {
        let lines = |a, b| Some(KeyPart::Lines(a, b));
        let cases = [
            ("cat src/app.py", None),
            ("less src/app.py", None), // no terminal: the whole file
            ("cat > src/app.py <<'EOF'", None),
            ("sed -i 's/a/b/' src/app.py", None),
            ("cd /repo && sed -n '580,620p' src/app.py", lines(580, 620)),
            ("sed -n 42p src/app.py", lines(42, 42)),
            ("sed -ne '5,9p' src/app.py", lines(5, 9)),
            ("sed --quiet -e '5,9p' src/app.py", lines(5, 9)),
            ("sed -n -e 10p -e 20p src/app.py", Some(KeyPart::Unknown)),
            ("sed -n '10p;20p' src/app.py", Some(KeyPart::Unknown)),
            ("nl -ba src/app.py | sed -n '600,630p'", lines(600, 630)),
            ("cat -n src/app.py | head -50", lines(1, 50)),
            ("head src/app.py", lines(1, 10)),
            ("head -n 200 src/app.py", lines(1, 200)),
            ("head --lines=7 src/app.py", lines(1, 7)),
            ("sed -n '100,300p' src/app.py | head -20", lines(100, 119)),
            ("sed -n '10,20p' src/app.py | head -50", lines(10, 20)),
            ("tail -n 30 src/app.py", Some(KeyPart::Unknown)),
            ("cat src/app.py | grep -n def", Some(KeyPart::Unknown)),
            ("head -200 src/app.py | tail -50", Some(KeyPart::Unknown)),
            ("sed -n '/def /p' src/app.py", Some(KeyPart::Unknown)),
            ("sed -n '20,10p' src/app.py", Some(KeyPart::Unknown)),
            ("head -c 100 src/app.py", Some(KeyPart::Unknown)),
            ("head -n -5 src/app.py", Some(KeyPart::Unknown)),
            ("cat 'a|b.py' && head -3 x.py", None), // a quoted bar, then another command
            ("sed -n 1,5p a.py && tail x.py", lines(1, 5)), // the next command is not a stage
            ("cat a.py | head -5 && echo done", lines(1, 5)),
        ];
        // Every wrong reading at once, with what it should have been.
        let wrong: Vec<_> = (cases.iter())
            .map(|&(command, part)| (command, part_of(command), part))
            .filter(|(_, got, want)| got != want)
            .collect();
        assert!(wrong.is_empty(), "(command, read, expected): {wrong:?}");
    }

    #[test]
    fn a_command_key_is_its_first_line_normalised() {
        assert_eq!(
            command_of("cd /repo &&  python -m pytest   tests/test_x.py -q\n").as_deref(),
            Some("python -m pytest tests/test_x.py -q")
        );
        assert_eq!(command_of("  \n"), None);
    }
}
