//! Tests of the line kinds.

use super::*;

use crate::compact::summarize::text::random_lines;

#[test]
fn substrings_are_found_where_str_find_finds_them() {
    let pieces: [&[u8]; 14] = [
        b"<",
        b"<<",
        b"</returncode>",
        b"</return",
        b", in ",
        b", i",
        b",",
        b" ",
        b"x",
        b"/rustc/",
        b"/usr/lib/",
        "é".as_bytes(),
        b"n",
        b"\"",
    ];
    let needles = [
        "</returncode>",
        ", in ",
        "<<",
        "/rustc/",
        "/usr/lib/",
        "x",
        "",
    ];
    for line in random_lines(&pieces, 20_000, 0x0123_4567_89ab_cdef) {
        let hay = String::from_utf8_lossy(&line);
        for needle in needles {
            assert_eq!(
                find_str(&hay, needle),
                hay.find(needle),
                "{hay:?} {needle:?}"
            );
        }
        // A frame's function: the text after the first `, in ` up to the next one.
        let framed = format!("File \"a.py\", line 3{hay}");
        let func = framed.trim().split(", in ").nth(1).map(str::trim);
        let expected = match func {
            Some(f) if !f.is_empty() => format!("a.py:3 in {f}"),
            _ => "a.py:3".to_string(),
        };
        assert_eq!(
            frame(&framed).as_deref(),
            Some(expected.as_str()),
            "{framed:?}"
        );
    }
}

/// [`is_definition`] as it read with `str::starts_with`.
fn is_definition_reference(code: &str) -> bool {
    let t = code.trim_start();
    let Some(&first) = t.as_bytes().first() else {
        return false;
    };
    definition_words(first).iter().any(|s| t.starts_with(s))
        && t.len() > 4
        && t.bytes().any(|b| b.is_ascii_alphabetic())
}

/// [`is_path_line`] as it read with `str::contains` and a search of the path bytes (the
/// `ls -l` row check is the library's own).
fn is_path_line_reference(t: &str) -> bool {
    let several = t.contains(char::is_whitespace);
    let long_listing = several && super::is_long_listing(t);
    if several && !long_listing {
        return false;
    }
    let last = t.rsplit(char::is_whitespace).next().unwrap_or(t);
    last.len() <= 200
        && last.bytes().any(|b| b.is_ascii_alphabetic())
        && last
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+@~".contains(&b))
        && (last.contains('/') || has_extension(last) || long_listing)
}

#[test]
fn definitions_and_paths_read_as_before() {
    let pieces: [&[u8]; 26] = [
        b"def ",
        b"de",
        b"pub fn ",
        b"pub(crate) fn ",
        b"pub",
        b"p",
        b"impl<",
        b"impl ",
        b"i",
        b"#define ",
        b"#",
        b"class ",
        b"x",
        b" ",
        b"\t",
        b"src/",
        b"a.py",
        b".",
        b"-rw-r--r-- ",
        b"drwxr-xr-x ",
        b"1 ",
        b"~",
        b"+",
        b"@",
        "é".as_bytes(),
        "\u{2003}".as_bytes(),
    ];
    let mut lines = random_lines(&pieces, 60_000, 0x3c6e_f372_fe94_f82b);
    // `ls -l` rows of every kind, and look-alikes.
    for perms in [
        "-rw-r--r--",
        "drwxr-xr-x",
        "lrwxrwxrwx",
        "xrwxrwxrwx",
        "-rw-r--r",
    ] {
        for name in ["setup.cfg", "src", "a b", "naïve.py"] {
            lines.push(format!("{perms} 1 root root 4096 Jan  1 12:00 {name}").into_bytes());
            lines.push(format!("{perms} 1 root 4096 {name}").into_bytes());
        }
    }
    for line in lines {
        let l = String::from_utf8_lossy(&line);
        assert_eq!(is_definition(&l), is_definition_reference(&l), "{l:?}");
        let t = l.trim();
        assert_eq!(is_path_line(t), is_path_line_reference(t), "{t:?}");
    }
}

#[test]
fn doc_lines_open_a_docstring_or_are_doc_comments_with_words() {
    for doc in [
        r#""""Return the sum of the prices."#,
        r#"r"""Match a path like a/b."#,
        "'''Build the tree.'''",
        "/// Parses one line.",
        "//! The parser.",
        "/** Opens a file. */",
        "# Counts every item once.",
        "* the body of a block comment",
    ] {
        assert!(is_doc_line(doc), "{doc:?}");
    }
    for not in [
        r#"""""#,
        r#""""Done""""#,
        "# x",
        "#include <stdio.h>",
        "return sum(x)",
        r#"x = """text with words""""#,
        "",
    ] {
        assert!(!is_doc_line(not), "{not:?}");
    }
}

#[test]
fn kinds_of_lines() {
    for (line, kind) in [
        ("Traceback (most recent call last):", LineKind::Error),
        ("ValueError: bad input", LineKind::Error),
        ("  File \"a/b.py\", line 3, in f", LineKind::Location),
        ("tests/test_a.py::test_x FAILED", LineKind::Outcome),
        ("==== 1 failed, 2 passed in 0.1s ====", LineKind::Outcome),
        ("src/lib.rs:42:    fn parse()", LineKind::Hit),
        ("src/lib.rs:42-    context", LineKind::Hit),
        ("   120\t    def parse(self, x):", LineKind::Definition),
        ("pub fn parse(input: &str) -> Ast {", LineKind::Definition),
        ("django/db/models/query.py", LineKind::Path),
        ("setup.cfg", LineKind::Path),
        ("names.", LineKind::Plain),
        (
            "-rw-r--r--  1 root root  4096 Jan  1 12:00 setup.cfg",
            LineKind::Path,
        ),
        ("<returncode>1</returncode>", LineKind::Status),
        ("exit status 101", LineKind::Status),
        ("<output>", LineKind::Noise),
        ("   ", LineKind::Noise),
        ("just some words here", LineKind::Plain),
        ("see src/error.rs for details", LineKind::Plain),
        // Code that names errors is not an error.
        ("        errors.append(", LineKind::Plain),
        (
            "    except (FieldDoesNotExist, AttributeError):",
            LineKind::Plain,
        ),
        ("    raise ValueError('bad')", LineKind::Plain),
        ("   608                 except KeyError:", LineKind::Plain),
        ("  1281             except Exception:", LineKind::Plain),
        ("ValueError: ", LineKind::Plain),
        ("  12\tValueError: bad value", LineKind::Error),
        (
            "error[E0277]: `&str` has no retention class",
            LineKind::Error,
        ),
        ("E       AssertionError: assert 1 == 2", LineKind::Error),
        (
            "django.core.exceptions.ImproperlyConfigured: Requested setting",
            LineKind::Error,
        ),
        (
            "thread 'main' panicked at src/parse.rs:3:5:",
            LineKind::Error,
        ),
    ] {
        assert_eq!(classify(line), kind, "{line}");
    }
}

#[test]
fn parts_of_lines() {
    assert_eq!(
        split_line_number("   42\tdef f():"),
        (Some("42"), "def f():")
    );
    assert_eq!(split_line_number("no number"), (None, "no number"));
    assert_eq!(hit("a/b.py:12:x = 1"), Some(("a/b.py", "12")));
    assert_eq!(hit("http://x:80/"), None);
    assert_eq!(
        hit("django/db/models/base.py:    id='models.E015',"),
        Some(("django/db/models/base.py", ""))
    );
    assert_eq!(hit("note: see the docs"), None);
    assert_eq!(hit("tests/a.py::test_x PASSED"), None);
    assert_eq!(
        frame("  File \"a/b.py\", line 12, in run").as_deref(),
        Some("a/b.py:12 in run")
    );
    assert_eq!(returncode("<returncode>2</returncode>"), Some("2"));
    assert!(is_project_location("src/parse.rs:3:5"));
    assert!(!is_project_location(
        "at /rustc/library/core/src/ops/function.rs:250:5"
    ));
    assert_eq!(listed_path("-rw-r--r-- 1 a a 1 Jan 1 12:00 x.py"), "x.py");
    assert_eq!(listed_path("drwxr-xr-x 2 a a 1 Jan 1 12:00 src"), "src/");
}

#[test]
fn a_test_runs_total_is_an_outcome_when_it_passed_too() {
    for total in [
        "============================== 1 passed in 0.01s ===============================",
        "3 passed, 1 warning in 0.12s",
        "Ran 5 tests in 0.003s",
        "OK",
        "OK (skipped=1)",
        "test result: ok. 5 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
        "Tests:       3 passed, 3 total",
        "================== tests finished: 5 passed, in 0.10 seconds ===================",
        "============================ no tests ran in 0.01s =============================",
    ] {
        assert_eq!(classify(total), LineKind::Outcome, "{total}");
    }
    for other in [
        "OKAY then",
        "Ranked results",
        "the test passed quickly",
        "passed = True",
        "============================= test session starts ==============================",
        "Tests: see below",
    ] {
        assert_ne!(classify(other), LineKind::Outcome, "{other}");
    }
}
