//! Supersession keys read off a command: the file it reads or writes, or the command
//! itself. Linear in the command, no regex.

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
    let line = command.lines().find(|l| !l.trim().is_empty())?;
    let words: Vec<&str> = strip_cd(line).split_whitespace().collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The file the command reads or writes: the target of a `>` redirection, else the last
/// word of its first pipeline stage that looks like a path (not an option, not a sed or
/// awk program, holding a `.` or a `/`). `None` when there is none.
pub(crate) fn path_of(command: &str) -> Option<String> {
    let line = command.lines().find(|l| !l.trim().is_empty())?;
    let line = strip_cd(line);
    let stage = first_stage(line);
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

fn strip_cd(line: &str) -> &str {
    let t = line.trim_start();
    match (t.strip_prefix("cd "), t.find("&&")) {
        (Some(_), Some(at)) => t[at + 2..].trim_start(),
        _ => t,
    }
}

/// The text before the first `|`, `;`, `&&` or `<<`, outside quotes.
fn first_stage(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut quote: Option<u8> = None;
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (Some(q), _) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'\'' | b'"') => quote = Some(b),
            (None, b'|' | b';') => return &line[..i],
            (None, b'&' | b'<') if bytes.get(i + 1) == Some(&b) => return &line[..i],
            _ => {}
        }
    }
    line
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
    fn a_command_key_is_its_first_line_normalised() {
        assert_eq!(
            command_of("cd /repo &&  python -m pytest   tests/test_x.py -q\n").as_deref(),
            Some("python -m pytest tests/test_x.py -q")
        );
        assert_eq!(command_of("  \n"), None);
    }
}
