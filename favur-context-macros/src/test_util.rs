//! Assertions shared by the unit tests of the expansions.

/// Asserts that `out` (an expansion printed as tokens) contains every one of `needles`.
#[track_caller]
pub(crate) fn has(out: &str, needles: &[&str]) {
    for needle in needles {
        assert!(out.contains(needle), "missing `{needle}` in: {out}");
    }
}

/// Asserts that `out` contains none of `needles`.
#[track_caller]
pub(crate) fn lacks(out: &str, needles: &[&str]) {
    for needle in needles {
        assert!(!out.contains(needle), "unexpected `{needle}` in: {out}");
    }
}
