//! Line numbers of an output: the numbers its lines carry (`nl`, `cat -n`, `grep -n` of
//! one file), or, for the lines of one file (`cat`, `head`, `sed -n 'A,Bp'`), their
//! place in that file. A line kept verbatim is shown with it: `601|     def f(self):`.

use std::borrow::Cow;

use super::text;

/// How the lines of one entry are numbered.
#[derive(Debug, Clone, Default)]
pub(crate) struct Numbering {
    /// The lines carry their own numbers.
    own: bool,
    /// The number of the first line of an output that is one file's lines.
    first: Option<usize>,
    /// The number of the next line, while it is known.
    next: Option<usize>,
    /// The output is one file's lines and the file is not a log (`cat src/a.py`, not
    /// `cat build.log`): its lines are the file's text, not what a program printed.
    source: bool,
}

impl Numbering {
    /// How the lines of `texts` are numbered, given the command that printed them.
    pub(crate) fn of(texts: &[&str], command: Option<&str>) -> Self {
        let (mut lines, mut numbered) = (0usize, 0usize);
        for t in texts {
            for line in text::text_lines(t) {
                let t = text::trim(line);
                if t.is_empty() || t.starts_with('<') {
                    continue; // blank, or markup around an output
                }
                lines += 1;
                numbered += usize::from(split_own_number(line).0.is_some());
            }
        }
        let own = lines > 0 && numbered * 10 >= lines * 6;
        let shown = if own {
            None
        } else {
            command.and_then(file_shown)
        };
        // The file whose lines these are: shown from a known line, or numbered by the
        // command that printed it (`nl -ba f | sed -n '10,40p'`, `cat -n f`).
        let file = match shown {
            Some((_, path)) => Some(path),
            None if own => command.and_then(file_numbered),
            None => None,
        };
        Numbering {
            own,
            first: shown.map(|(start, _)| start),
            next: None,
            source: file.is_some_and(|path| !is_log(path)),
        }
    }

    /// A text of the entry starts (its first line is the file's first line shown).
    pub(crate) fn start_text(&mut self) {
        self.next = self.first;
    }

    /// The number of `line`, the next line of the text, if known; `tags`: the line's
    /// [`wrapper_tags`], if it is the observation's markup (it then has no number).
    pub(crate) fn next_line(&mut self, line: &str, tags: Option<&[&str]>) -> Option<usize> {
        if self.own {
            return split_own_number(line).0.and_then(|n| n.parse().ok());
        }
        self.first?;
        if let Some(tags) = tags {
            // mini-swe-agent's markup: the output starts after `<output>`; past an
            // elision the places are not known.
            for &tag in tags {
                match tag {
                    "<output>" | "<output_head>" => self.next = self.first,
                    "<returncode>" => {}
                    _ => self.next = None,
                }
            }
            return None;
        }
        let n = self.next?;
        self.next = Some(n + 1);
        Some(n)
    }

    /// Whether the output is one file's lines and the file is not a log: its lines are
    /// read as the file's text (definitions, not errors, hits or listed paths).
    pub(crate) fn source(&self) -> bool {
        self.source
    }

    /// Whether the lines carry their own numbers.
    pub(crate) fn own(&self) -> bool {
        self.own
    }
}

/// The tags of a line of mini-swe-agent's markup around an output, in order, if the line
/// is nothing else: `<returncode>` for `<returncode>0</returncode>`, `<output>`,
/// `</warning>` and `<output_head>` for `</warning><output_head>`, `<elided_chars>` ...
/// `None` for any other line, such as a line of HTML in the file shown
/// (`<link href="a.css">`, `</div>`), which is one of the file's lines.
pub(crate) fn wrapper_tags(t: &str) -> Option<Vec<&str>> {
    const TAGS: [&str; 6] = [
        "returncode",
        "output",
        "output_head",
        "output_tail",
        "elided_chars",
        "warning",
    ];
    let mut tags = Vec::new();
    let mut rest = t;
    while !rest.is_empty() {
        let inner = rest.strip_prefix('<')?;
        let closing = inner.starts_with('/');
        let name_end = inner.find('>')?;
        let name = &inner[usize::from(closing)..name_end];
        if !TAGS.contains(&name) {
            return None;
        }
        let tag = &rest[..name_end + 2];
        rest = &rest[name_end + 2..];
        if name == "returncode" && !closing {
            // `<returncode>0</returncode>`: the code and the closing tag with it.
            let close = rest.find("</returncode>")?;
            rest = &rest[close + "</returncode>".len()..];
        }
        tags.push(tag);
    }
    (!tags.is_empty()).then_some(tags)
}

/// Whether a file's name says it holds what a program printed (`build.log`, `out.txt`)
/// or has no extension, rather than source or configuration.
fn is_log(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            matches!(
                ext.to_ascii_lowercase().as_str(),
                "log" | "out" | "err" | "txt"
            )
        }
        _ => true,
    }
}

/// The first line number, and the file, of a command that prints one file's lines: `cat FILE` and
/// `head ... FILE` print from line 1, `sed -n 'A,Bp' FILE` from line A. Only the last
/// command of a list (`cd x && sed -n ...`) is read, and none that pipes or redirects.
fn file_shown(command: &str) -> Option<(usize, &str)> {
    let last = super::producers::last_command(command)?;
    if last.contains(['|', '>', '<', '`', '$']) {
        return None;
    }
    let words: Vec<&str> = last.split_whitespace().collect();
    let files = words.iter().skip(1).filter(|w| !w.starts_with('-')).count();
    let file = words.last().copied()?;
    let start = match words.first().copied()? {
        "cat" if files == 1 && words.len() == 2 => Some(1),
        "head" if files == 1 || (files == 2 && words.get(1) == Some(&"-n")) => Some(1),
        "sed" if words.get(1) == Some(&"-n") && words.len() == 4 => {
            let script = words.get(2)?.trim_matches(['\'', '"']);
            let range = script.strip_suffix('p')?;
            let start = range.split(',').next()?;
            let ok = range.split(',').count() <= 2
                && range
                    .split(',')
                    .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
            ok.then(|| start.parse().ok()).flatten()
        }
        _ => None,
    };
    start.map(|n| (n, file.trim_matches(['\'', '"'])))
}

/// The file a command numbers as it prints it: `nl [-ba] FILE`, `cat -n FILE`, either
/// piped to a command that picks lines (`nl -ba f | sed -n '10,40p'`, `| head -50`).
/// Only the last command of a list is read, and none that redirects.
fn file_numbered(command: &str) -> Option<&str> {
    let last = super::producers::last_command(command)?;
    if last.contains(['>', '<', '`', '$']) {
        return None;
    }
    let mut stages = last.split('|').map(str::trim);
    let words: Vec<&str> = stages.next()?.split_whitespace().collect();
    let picks = stages.all(|stage| {
        let tool = stage.split_whitespace().next();
        matches!(tool, Some("sed" | "head" | "tail"))
    });
    let files: Vec<&str> = words
        .iter()
        .skip(1)
        .copied()
        .filter(|w| !w.starts_with('-'))
        .collect();
    let numbers = match words.first().copied()? {
        "nl" => true,
        "cat" => words.iter().skip(1).any(|w| *w == "-n"),
        _ => false,
    };
    match files.as_slice() {
        [file] if numbers && picks => Some(file.trim_matches(['\'', '"'])),
        _ => None,
    }
}

/// The byte after a line's own number (`b':'` for `585:    def f():`, a line `grep -n`
/// matched; `b'-'` for one of its context lines), if the line starts with one.
pub(crate) fn own_separator(line: &str) -> Option<u8> {
    let t = text::trim_start(line);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    (1..=7)
        .contains(&digits)
        .then(|| t.as_bytes().get(digits).copied())
        .flatten()
}

/// Splits a line's own number off, keeping the code as it was printed (its indent
/// included): `"   601\t    def f():"` -> `(Some("601"), "    def f():")`; `"42:x"` ->
/// `(Some("42"), "x")`. Only the one separator after the number is dropped.
pub(crate) fn split_own_number(line: &str) -> (Option<&str>, &str) {
    let t = text::trim_start(line);
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 7 {
        return (None, line);
    }
    match t.as_bytes().get(digits) {
        Some(b'\t' | b':' | b' ' | b'|' | b'-') => match t.get(digits + 1..) {
            Some(code) => (t.get(..digits), code),
            None => (None, line),
        },
        _ => (None, line),
    }
}

/// The line's number (if the lines carry their own) and its code as printed.
pub(crate) fn split_number<'a>(line: &'a str, numbering: &Numbering) -> (Option<&'a str>, &'a str) {
    if numbering.own() {
        split_own_number(line)
    } else {
        (None, line)
    }
}

/// A line kept verbatim: `N| code` with its number, `| code` without; at most `limit`
/// bytes of it (cut with `…`). Tabs stay; other control characters become spaces.
pub(crate) fn verbatim_line(number: Option<usize>, code: &str, limit: usize) -> Cow<'static, str> {
    let mut out = String::with_capacity(code.len().min(limit) + 10);
    if let Some(n) = number {
        crate::sent::push_u64(&mut out, n as u64);
    }
    out.push_str("| ");
    let mut end = code.len().min(limit);
    while !code.is_char_boundary(end) {
        end -= 1;
    }
    let kept = code.get(..end).unwrap_or_default().trim_end();
    out.extend(
        kept.chars()
            .map(|c| if c.is_control() && c != '\t' { ' ' } else { c }),
    );
    if end < code.len() {
        out.push('…');
    }
    Cow::Owned(out)
}

/// Whether a line of an earlier summary is one it kept verbatim with its number
/// (`601| code`).
pub(crate) fn is_kept_verbatim(trimmed: &str) -> bool {
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && trimmed.get(digits..).is_some_and(|r| r.starts_with("| "))
}

/// A definition or its doc line as a summary keeps it: verbatim with its number when it
/// is known (`120|     def parse(self, x):`), else with its indent, which shows what
/// it is nested in (`    def parse(self, x):`).
pub(super) fn kept_definition(number: Option<usize>, code: &str) -> Cow<'_, str> {
    kept_line(number, code, (160, 120))
}

/// A line kept as printed: verbatim with its number when it is known, cut at `limit.0`
/// bytes; else with its indent, cut at `limit.1` bytes.
pub(super) fn kept_line(number: Option<usize>, code: &str, limit: (usize, usize)) -> Cow<'_, str> {
    if number.is_some() {
        return verbatim_line(number, code, limit.0);
    }
    let trimmed = text::trim(code);
    let lead = code.len() - text::trim_start(code).len();
    let indent = code.get(..lead).unwrap_or("");
    let kept = match code.get(..lead + trimmed.len()) {
        Some(line) if indent.bytes().all(|b| b == b' ' || b == b'\t') => line,
        _ => trimmed,
    };
    super::producers::cut_borrowed(kept, limit.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The number of `line`, its markup read as the summarizer reads it.
    fn next(n: &mut Numbering, line: &str) -> Option<usize> {
        n.next_line(line, wrapper_tags(text::trim(line)).as_deref())
    }

    /// The number of each line of `text`, printed by `command`.
    fn numbers(text: &str, command: Option<&str>) -> Vec<Option<usize>> {
        let mut n = Numbering::of(&[text], command);
        n.start_text();
        text::text_lines(text).map(|l| next(&mut n, l)).collect()
    }

    fn file_start(command: &str) -> Option<usize> {
        file_shown(command).map(|(start, _)| start)
    }

    #[test]
    fn files_printed_whole_or_in_part_are_numbered_from_their_first_line() {
        assert_eq!(file_start("cat src/a.py"), Some(1));
        assert_eq!(
            file_start("cd /testbed && sed -n '566,650p' django/forms/models.py"),
            Some(566)
        );
        assert_eq!(file_start("sed -n 12p a.py"), Some(12));
        assert_eq!(file_start("head -n 40 a.py"), Some(1));
        assert_eq!(file_start("sed -n '1,5p;9p' a.py"), None);
        assert_eq!(file_start("cat a.py | grep x"), None);
        assert_eq!(file_start("cat a.py b.py"), None);
        assert_eq!(file_start("python -m pytest"), None);
        assert_eq!(file_shown("head -n 40 src/a.py"), Some((1, "src/a.py")));
        assert!(!is_log("src/a.py") && !is_log("setup.cfg") && !is_log(".github/ci.yml"));
        assert!(is_log("build.log") && is_log("out.TXT") && is_log("Makefile") && is_log(".env"));
    }

    #[test]
    fn a_file_numbered_by_the_command_that_prints_it_is_told() {
        for (command, file) in [
            ("nl -ba src/a.py | sed -n '10,40p'", Some("src/a.py")),
            ("cd /x && cat -n 'src/a.py' | head -50", Some("src/a.py")),
            ("nl src/a.py", Some("src/a.py")),
            ("cat src/a.py", None),
            ("nl -ba a.py b.py", None),
            ("nl -ba a.py | grep x", None),
            ("nl -ba a.py > out.txt", None),
            ("grep -n x a.py", None),
        ] {
            assert_eq!(file_numbered(command), file, "{command}");
        }
        assert_eq!(own_separator("  585:    def f():"), Some(b':'));
        assert_eq!(own_separator("584-  x = 1"), Some(b'-'));
        assert_eq!(own_separator("12345678:x"), None);
        assert_eq!(own_separator("def f():"), None);
        // Numbered by `nl`, a source file's lines are its text; a log's are not.
        let texts = ["     1\traise ValueError(x)\n     2\tx = 1\n"];
        assert!(Numbering::of(&texts, Some("nl -ba src/a.py")).source());
        assert!(!Numbering::of(&texts, Some("nl -ba build.log")).source());
        assert!(!Numbering::of(&texts, Some("grep -n x src/a.py")).source());
    }

    #[test]
    fn own_numbers_keep_the_code_as_printed() {
        assert_eq!(
            split_own_number("   601\t    def f():"),
            (Some("601"), "    def f():")
        );
        assert_eq!(split_own_number("42:x = 1"), (Some("42"), "x = 1"));
        assert_eq!(split_own_number("no number"), (None, "no number"));
        let texts = [
            "<returncode>0</returncode>\n<output>\n     1\timport os\n     2\t\n     3\tx = 1\n</output>",
        ];
        let mut n = Numbering::of(&texts, None);
        assert!(n.own());
        n.start_text();
        assert_eq!(next(&mut n, "     3\tx = 1"), Some(3));
    }

    #[test]
    fn lines_of_a_file_view_count_from_the_output_start() {
        let got = numbers(
            "<returncode>0</returncode>\n<output>\nclass A:\n    x = 1\n</output>",
            Some("sed -n '10,11p' a.py"),
        );
        assert_eq!(got, [None, None, Some(10), Some(11), None]);
        assert_eq!(verbatim_line(Some(11), "    x = 1", 400), "11|     x = 1");
        assert_eq!(verbatim_line(None, "\tx", 400), "| \tx");
        assert!(is_kept_verbatim("11|     x = 1"));
        assert!(!is_kept_verbatim("| 11: x"));
    }

    #[test]
    fn lines_of_html_in_a_file_are_its_lines_and_only_the_wrapper_is_markup() {
        let got = numbers(
            "<returncode>0</returncode>\n<output>\n<div>\n<link href=\"a.css\" rel=\"stylesheet\">\n</div>\nx = 1\n</output>",
            Some("head -5 page.html"),
        );
        assert_eq!(got, [None, None, Some(1), Some(2), Some(3), Some(4), None]);
        // Past an elision the places are not known.
        let got = numbers(
            "<output_head>\na = 1\n</output_head>\n<elided_chars>\n90 characters elided\n</elided_chars>\n<output_tail>\nb = 2\n</output_tail>",
            Some("cat a.py"),
        );
        assert_eq!(
            got,
            [None, Some(1), None, None, None, None, None, None, None]
        );
        // A long output: the warning, then its head on the warning's last line.
        let got = numbers(
            "<returncode>0</returncode>\n<warning>\nThe output was too long.\n</warning><output_head>\nimport os\n</output_head>",
            Some("cat a.py"),
        );
        assert_eq!(got, [None, None, None, None, Some(1), None]);
        assert_eq!(
            wrapper_tags("<returncode>1</returncode>"),
            Some(vec!["<returncode>"])
        );
        assert_eq!(
            wrapper_tags("</warning><output_head>"),
            Some(vec!["</warning>", "<output_head>"])
        );
        assert_eq!(wrapper_tags("<output attr=\"x\">"), None);
        assert_eq!(wrapper_tags("<outputs>"), None);
        assert_eq!(wrapper_tags("<output>x = 1"), None);
    }
}
