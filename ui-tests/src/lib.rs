//! Compile-pass and compile-fail (trybuild) tests of favur-context's macros and of the
//! compile-time guarantee that nothing unclassified can be appended. The cases live in
//! `tests/ui/`; see `README.md`.
//!
//! This library is the part of the harness that does not depend on the compiler's exact
//! wording: every compile-fail case `tests/ui/fail/<category>/<case>.rs` has a committed
//! `<case>.phrases` file, the key phrases its errors must contain (and, after `!`, must not). On the compiler recorded
//! in `RUSTC_VERSION` the phrases are checked against the committed `.stderr` (which
//! trybuild compares with the compiler's output exactly); on any other compiler the exact
//! comparison cannot hold, so [`compile_fail_cases`] compiles every case with `cargo check`
//! and checks that each fails to compile with errors containing its phrases.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One compile-fail case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// `append/str` for `tests/ui/fail/append/str.rs`.
    pub name: String,
    /// The case's source file.
    pub path: PathBuf,
    /// The phrases its errors must contain, from `<case>.phrases`.
    pub phrases: Vec<String>,
    /// The phrases its errors must not contain (lines starting with `!`), e.g. a
    /// secondary error that the case shows is not emitted.
    pub absent: Vec<String>,
}

impl Case {
    /// The committed `.stderr` file next to the case.
    pub fn stderr_path(&self) -> PathBuf {
        self.path.with_extension("stderr")
    }

    /// The name of the case's binary in the generated project (`append__str`).
    pub fn bin_name(&self) -> String {
        self.name.replace('/', "__")
    }
}

/// The phrases of a `.phrases` file: one per line, surrounding whitespace trimmed; blank
/// lines and lines starting with `#` are ignored. Returns the phrases that must appear and
/// those that must not (lines starting with `!`).
///
/// ```
/// let (present, absent) = favur_context_ui_tests::parse_phrases(
///     "# a comment\n`&str` has no retention class\n\n  E0277 \n!does not convert\n",
/// );
/// assert_eq!(present, ["`&str` has no retention class", "E0277"]);
/// assert_eq!(absent, ["does not convert"]);
/// ```
pub fn parse_phrases(text: &str) -> (Vec<String>, Vec<String>) {
    let mut present = Vec::new();
    let mut absent = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.strip_prefix('!') {
            Some(phrase) if !phrase.trim().is_empty() => absent.push(phrase.trim().to_owned()),
            Some(_) => {}
            None => present.push(line.to_owned()),
        }
    }
    (present, absent)
}

/// What is wrong with `output` for `case`: each phrase it lacks, and each phrase it must
/// not contain but does.
///
/// ```
/// use favur_context_ui_tests::{phrase_problems, Case};
/// let case = Case {
///     name: "a/b".into(),
///     path: "a/b.rs".into(),
///     phrases: vec!["x".into(), "y".into()],
///     absent: vec!["z".into()],
/// };
/// assert_eq!(phrase_problems(&case, "error: x, z"), ["missing \"y\"", "unexpected \"z\""]);
/// assert!(phrase_problems(&case, "error: x y").is_empty());
/// ```
pub fn phrase_problems(case: &Case, output: &str) -> Vec<String> {
    let missing = case
        .phrases
        .iter()
        .filter(|p| !output.contains(p.as_str()))
        .map(|p| format!("missing {p:?}"));
    let unexpected = case
        .absent
        .iter()
        .filter(|p| output.contains(p.as_str()))
        .map(|p| format!("unexpected {p:?}"));
    missing.chain(unexpected).collect()
}

/// Every compile-fail case under `fail_dir` (`<fail_dir>/<category>/<case>.rs`), sorted,
/// with its phrases. Missing or empty `.phrases` files, and `.phrases` or `.stderr` files
/// without a case, are errors: a case without phrases would check nothing on other
/// compilers, and a stray file is a case that silently stopped running.
pub fn fail_cases(fail_dir: &Path) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    let mut problems = Vec::new();
    let categories = sorted_entries(fail_dir)?;
    for category in categories.iter().filter(|p| p.is_dir()) {
        let cat = file_name(category);
        for file in sorted_entries(category)? {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = format!("{cat}/{stem}");
            match file.extension().and_then(|e| e.to_str()) {
                Some("rs") => {
                    let phrases_path = file.with_extension("phrases");
                    match fs::read_to_string(&phrases_path) {
                        Ok(text) => {
                            let (phrases, absent) = parse_phrases(&text);
                            if phrases.is_empty() {
                                problems.push(format!("{name}: {} has no phrases", phrases_path.display()));
                            }
                            cases.push(Case {
                                name,
                                path: file.clone(),
                                phrases,
                                absent,
                            });
                        }
                        Err(e) => problems.push(format!(
                            "{name}: cannot read {}: {e} (every compile-fail case needs one; see ui-tests/README.md)",
                            phrases_path.display()
                        )),
                    }
                }
                Some("phrases" | "stderr") if !file.with_extension("rs").exists() => {
                    problems.push(format!("{}: no case {name}.rs next to it", file.display()));
                }
                _ => {}
            }
        }
    }
    if cases.is_empty() {
        problems.push(format!(
            "no compile-fail cases under {}",
            fail_dir.display()
        ));
    }
    if problems.is_empty() {
        Ok(cases)
    } else {
        Err(problems.join("\n"))
    }
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    Ok(entries)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Checks each case's phrases against its committed `.stderr` (on the recorded compiler,
/// where trybuild checks that the `.stderr` is exactly the compiler's output). Returns one
/// line per problem.
pub fn check_against_stderr(cases: &[Case]) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases {
        match fs::read_to_string(case.stderr_path()) {
            Ok(stderr) => {
                for problem in phrase_problems(case, &stderr) {
                    problems.push(format!("{}: {problem} in its .stderr", case.name));
                }
            }
            Err(e) => problems.push(format!("{}: cannot read its .stderr: {e}", case.name)),
        }
    }
    problems
}

/// What `cargo check` reported for one case's binary.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Number of error-level diagnostics.
    pub errors: usize,
    /// Whether the binary was checked successfully (an artifact was produced).
    pub compiled: bool,
    /// The rendered diagnostics, concatenated.
    pub rendered: String,
}

/// Groups the `--message-format=json` output of cargo by target name. Lines that are not
/// JSON (cargo's own text) are ignored.
///
/// ```
/// let out = r#"{"reason":"compiler-message","target":{"name":"a__b","kind":["bin"]},"message":{"level":"error","rendered":"error: x\n"}}
/// {"reason":"compiler-artifact","target":{"name":"a__c","kind":["bin"]}}"#;
/// let outcomes = favur_context_ui_tests::outcomes(out);
/// assert_eq!(outcomes["a__b"].errors, 1);
/// assert!(outcomes["a__b"].rendered.contains("error: x"));
/// assert!(outcomes["a__c"].compiled);
/// ```
pub fn outcomes(json_lines: &str) -> BTreeMap<String, Outcome> {
    let mut out: BTreeMap<String, Outcome> = BTreeMap::new();
    for line in json_lines.lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let Some(target) = value["target"]["name"].as_str() else {
            continue;
        };
        let entry = out.entry(target.to_owned()).or_default();
        match value["reason"].as_str() {
            Some("compiler-message") => {
                let message = &value["message"];
                if message["level"].as_str() == Some("error") {
                    entry.errors += 1;
                }
                entry
                    .rendered
                    .push_str(message["rendered"].as_str().unwrap_or_default());
            }
            Some("compiler-artifact") => entry.compiled = true,
            _ => {}
        }
    }
    out
}

/// The manifest of a project with one binary per case, depending on favur-context at
/// `workspace` (and serde_json, which some cases use).
pub fn manifest(workspace: &Path, cases: &[Case]) -> String {
    let mut toml = String::new();
    let lib = workspace.join("favur-context");
    let _ = write!(
        toml,
        "[package]\nname = \"favur-context-ui-phrases\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [workspace]\n\n[dependencies]\nfavur-context = {{ path = {} }}\nserde_json = \"1\"\n",
        toml_string(&lib.to_string_lossy())
    );
    for case in cases {
        let _ = write!(
            toml,
            "\n[[bin]]\nname = {}\npath = {}\ntest = false\ndoc = false\n",
            toml_string(&case.bin_name()),
            toml_string(&case.path.to_string_lossy())
        );
    }
    toml
}

fn toml_string(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// Compiles every case (one `cargo check --keep-going` of a generated project under
/// `work_dir`, with the workspace's `Cargo.lock`) and checks that each fails to compile
/// with errors containing its phrases. Returns one line per problem.
pub fn compile_fail_cases(
    workspace: &Path,
    work_dir: &Path,
    cases: &[Case],
) -> Result<Vec<String>, String> {
    fs::create_dir_all(work_dir)
        .map_err(|e| format!("cannot create {}: {e}", work_dir.display()))?;
    fs::write(work_dir.join("Cargo.toml"), manifest(workspace, cases))
        .map_err(|e| format!("cannot write the manifest: {e}"))?;
    // The workspace's lock file, so the cases build against the same dependency versions.
    let _ = fs::copy(workspace.join("Cargo.lock"), work_dir.join("Cargo.lock"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .current_dir(work_dir)
        .args([
            "check",
            "--bins",
            "--keep-going",
            "--message-format=json",
            "--quiet",
        ])
        .arg("--target-dir")
        .arg(work_dir.join("target"))
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", cargo.to_string_lossy()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let found = outcomes(&stdout);
    let mut problems = Vec::new();
    for case in cases {
        let Some(outcome) = found.get(&case.bin_name()) else {
            problems.push(format!(
                "{}: cargo reported nothing for it (did the library fail to build?)\n{}",
                case.name,
                String::from_utf8_lossy(&output.stderr)
            ));
            continue;
        };
        if outcome.compiled || outcome.errors == 0 {
            problems.push(format!(
                "{}: expected a compile error, but it compiled",
                case.name
            ));
            continue;
        }
        for problem in phrase_problems(case, &outcome.rendered) {
            problems.push(format!(
                "{}: {problem} in the compiler's errors\n--- the errors ---\n{}",
                case.name, outcome.rendered
            ));
        }
    }
    Ok(problems)
}

/// Whether `value` (of the `CI` environment variable) says this is a CI run: set and not
/// `false`/`0`.
///
/// ```
/// use favur_context_ui_tests::is_ci;
/// assert!(is_ci(Some("true")) && is_ci(Some("1")));
/// assert!(!is_ci(None) && !is_ci(Some("false")) && !is_ci(Some("0")) && !is_ci(Some("")));
/// ```
pub fn is_ci(value: Option<&str>) -> bool {
    matches!(value.map(str::trim), Some(v) if !v.is_empty() && v != "false" && v != "0")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("favur-ui-lib-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("append")).unwrap();
        dir
    }

    #[test]
    fn cases_need_phrases_and_stray_files_are_reported() {
        let dir = temp_dir("cases");
        fs::write(dir.join("append/str.rs"), "fn main() {}").unwrap();
        fs::write(
            dir.join("append/str.phrases"),
            "# c\nno retention class\n!E0308\n",
        )
        .unwrap();
        fs::write(dir.join("append/str.stderr"), "error: no retention class").unwrap();
        let cases = fail_cases(&dir).unwrap();
        assert_eq!(cases.len(), 1);
        assert_eq!(
            (cases[0].name.as_str(), cases[0].bin_name()),
            ("append/str", "append__str".to_owned())
        );
        assert_eq!(cases[0].phrases, ["no retention class"]);
        assert_eq!(cases[0].absent, ["E0308"]);
        assert!(check_against_stderr(&cases).is_empty());
        fs::write(
            dir.join("append/str.stderr"),
            "error: no retention class\nerror[E0308]",
        )
        .unwrap();
        assert_eq!(check_against_stderr(&cases).len(), 1);
        fs::write(dir.join("append/str.stderr"), "error: no retention class").unwrap();

        fs::write(dir.join("append/str.phrases"), "not there\n").unwrap();
        let cases = fail_cases(&dir).unwrap();
        assert_eq!(check_against_stderr(&cases).len(), 1);

        fs::write(dir.join("append/other.rs"), "fn main() {}").unwrap();
        fs::write(dir.join("append/gone.stderr"), "").unwrap();
        fs::write(dir.join("append/empty.rs"), "").unwrap();
        fs::write(dir.join("append/empty.phrases"), "# only a comment\n").unwrap();
        let err = fail_cases(&dir).unwrap_err();
        assert!(err.contains("append/other: cannot read"), "{err}");
        assert!(err.contains("gone.stderr: no case append/gone.rs"), "{err}");
        assert!(
            err.contains("append/empty:") && err.contains("has no phrases"),
            "{err}"
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn outcomes_are_grouped_by_target() {
        let json = [
            r#"{"reason":"compiler-message","target":{"name":"a__x"},"message":{"level":"warning","rendered":"warning: w\n"}}"#,
            r#"{"reason":"compiler-message","target":{"name":"a__x"},"message":{"level":"error","rendered":"error: e1\n"}}"#,
            r#"{"reason":"compiler-message","target":{"name":"a__x"},"message":{"level":"error","rendered":"error: e2\n"}}"#,
            "not json",
            r#"{"reason":"build-finished","success":false}"#,
        ]
        .join("\n");
        let found = outcomes(&json);
        assert_eq!(found.len(), 1);
        let x = &found["a__x"];
        assert_eq!((x.errors, x.compiled), (2, false));
        assert!(x.rendered.contains("e1") && x.rendered.contains("e2") && x.rendered.contains("w"));
    }

    #[test]
    fn the_manifest_has_one_bin_per_case() {
        let case = Case {
            name: "append/str".into(),
            path: "/w/ui-tests/tests/ui/fail/append/str.rs".into(),
            phrases: vec!["x".into()],
            absent: Vec::new(),
        };
        let toml = manifest(Path::new("/w"), &[case]);
        assert!(
            toml.contains("favur-context = { path = \"/w/favur-context\" }"),
            "{toml}"
        );
        assert!(toml.contains("[[bin]]\nname = \"append__str\"\npath = \"/w/ui-tests/tests/ui/fail/append/str.rs\""), "{toml}");
        assert!(toml.contains("[workspace]"), "{toml}");
    }
}
