//! A search of one file numbered by the search (`grep -n`, `grep -nC 5`): the lines it
//! matched are hits, kept verbatim with their numbers, before its context lines.

use super::*;

const CONTEXT: &str = "575-        \"\"\"Initialize linter for linting.\n576-\n577-        This method is called before any linting is done.\n578-        \"\"\"\n579-        for msg in self.msgs_store.messages:\n580-            self._msgs_state[msg.msgid] = False\n581-\n582:    def _discover_files(self, files_or_modules):\n583-        \"\"\"Discover python modules and packages in sub-directory.\n--\n633-        if self.config.recursive:\n634:            files_or_modules = tuple(self._discover_files(files_or_modules))\n635-        if self.config.from_stdin:\n";

#[test]
fn the_lines_a_search_of_one_file_matched_are_kept_verbatim() {
    let text = summary_of_run(
        "grep -nC 7 \"_discover_files\" pylint/lint/pylinter.py",
        CONTEXT,
    );
    for hit in [
        "\n  582|     def _discover_files(self, files_or_modules):\n",
        "\n  634|             files_or_modules = tuple(self._discover_files(files_or_modules))\n",
    ] {
        assert!(text.contains(hit), "{hit:?} missing from:\n{text}");
    }
    // A context line is no hit.
    assert!(!text.contains("635|"), "{text}");
    // The same lines printed by a command that is no search: no hit.
    let view = summary_of_run("nl -ba pylint/lint/pylinter.py | sed -n 575,635p", CONTEXT);
    assert!(!view.contains("634|"), "{view}");
}

#[test]
fn searches_are_told_by_their_last_command() {
    use crate::compact::summarize::producers::is_search;
    for search in [
        "grep -n x a.py",
        "cd /testbed && grep -rn x src",
        "rg -n x",
        "git grep -n x",
    ] {
        assert!(is_search(search), "{search}");
    }
    for other in [
        "grep -n x a.py && cat a.py",
        "git log",
        "nl -ba a.py",
        "sed -n 1,5p a.py",
    ] {
        assert!(!is_search(other), "{other}");
    }
}
