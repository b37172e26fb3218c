//! The sites lockfile: the classification sites of a codebase as reviewed, so that a class
//! that changed, or a site that appeared or disappeared, fails a check until the lockfile
//! is updated with it.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Site, SitesError};

/// The lockfile format version.
pub const LOCKFILE_FORMAT: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
struct Lockfile {
    format: u32,
    #[serde(default)]
    comment: String,
    sites: Vec<Site>,
}

/// Writes `sites` as a lockfile (pretty JSON, one object per site).
///
/// # Errors
///
/// [`SitesError::Io`] if the file cannot be written.
pub fn write(path: &Path, sites: &[Site]) -> Result<(), SitesError> {
    let lock = Lockfile {
        format: LOCKFILE_FORMAT,
        comment: "favur-context sites lockfile: every retention classification site, keyed by file, enclosing item and position in it (`line` is for people). Regenerate with `favur-context sites PATH --write LOCKFILE` after reviewing a change.".to_owned(),
        sites: sites.to_vec(),
    };
    let mut text = serde_json::to_string_pretty(&lock).map_err(|e| SitesError::Lockfile {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    text.push('\n');
    std::fs::write(path, text).map_err(|source| SitesError::Io {
        path: path.to_owned(),
        action: "write",
        source,
    })
}

/// Reads a lockfile written by [`write()`].
///
/// # Errors
///
/// [`SitesError::Io`] if it cannot be read, [`SitesError::Lockfile`] if it is not a
/// lockfile of this format.
pub fn read(path: &Path) -> Result<Vec<Site>, SitesError> {
    let text = std::fs::read_to_string(path).map_err(|source| SitesError::Io {
        path: path.to_owned(),
        action: "read",
        source,
    })?;
    let lock: Lockfile = serde_json::from_str(&text).map_err(|e| SitesError::Lockfile {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    if lock.format != LOCKFILE_FORMAT {
        return Err(SitesError::Lockfile {
            path: path.to_owned(),
            message: format!(
                "format {} (this version reads format {LOCKFILE_FORMAT})",
                lock.format
            ),
        });
    }
    Ok(lock.sites)
}

/// A difference between the lockfile and the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// The site is there, with another class (or another macro).
    Changed {
        /// As locked.
        locked: Site,
        /// As found.
        found: Site,
    },
    /// A site the lockfile does not have.
    Appeared(Site),
    /// A site the lockfile has and the code no longer does.
    Disappeared(Site),
}

fn item(s: &Site) -> &str {
    if s.item.is_empty() { "(file)" } else { &s.item }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Changed { locked, found } => write!(
                f,
                "{}:{}: class changed in {} (`{}` {}, locked at line {} as `{}` {})",
                found.file,
                found.line,
                item(found),
                found.what,
                found.class,
                locked.line,
                locked.what,
                locked.class
            ),
            Difference::Appeared(s) => write!(
                f,
                "{}:{}: new site in {} (`{}` {}), not in the lockfile",
                s.file,
                s.line,
                item(s),
                s.what,
                s.class
            ),
            Difference::Disappeared(s) => write!(
                f,
                "{}: site removed from {} (`{}` {}, locked at line {})",
                s.file,
                item(s),
                s.what,
                s.class,
                s.line
            ),
        }
    }
}

type Key<'a> = (&'a str, &'a str);

fn same(a: &Site, b: &Site) -> bool {
    a.kind == b.kind && a.what == b.what && a.class == b.class
}

/// The differences between the `locked` sites and the `found` ones. Sites are compared
/// per file and enclosing item, in order: the longest common run of identical sites
/// (kind, what, class) is matched, and in each gap a locked and a found site of the same
/// kind pair up as a class change; the rest appeared or disappeared. Lines are not
/// compared, so code moving above a site changes nothing.
pub fn diff(locked: &[Site], found: &[Site]) -> Vec<Difference> {
    let mut groups: BTreeMap<Key<'_>, (Vec<&Site>, Vec<&Site>)> = BTreeMap::new();
    for s in locked {
        groups.entry((&s.file, &s.item)).or_default().0.push(s);
    }
    for s in found {
        groups.entry((&s.file, &s.item)).or_default().1.push(s);
    }
    let mut out = Vec::new();
    for (_, (mut a, mut b)) in groups {
        a.sort_by_key(|s| s.ordinal);
        b.sort_by_key(|s| s.ordinal);
        align(&a, &b, &mut out);
    }
    out
}

/// Longest common subsequence of two site lists, then the gaps.
fn align(a: &[&Site], b: &[&Site], out: &mut Vec<Difference>) {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: length of the LCS of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if same(a[i], b[j]) {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let (mut gone, mut new): (Vec<&Site>, Vec<&Site>) = (Vec::new(), Vec::new());
    while i < n || j < m {
        if i < n && j < m && same(a[i], b[j]) {
            gap(&mut gone, &mut new, out);
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            new.push(b[j]);
            j += 1;
        } else {
            gone.push(a[i]);
            i += 1;
        }
    }
    gap(&mut gone, &mut new, out);
}

/// Pairs the locked and found sites of one gap by kind, in order.
fn gap(gone: &mut Vec<&Site>, new: &mut Vec<&Site>, out: &mut Vec<Difference>) {
    let mut unpaired: Vec<&Site> = Vec::new();
    for found in new.drain(..) {
        match gone.iter().position(|l| l.kind == found.kind) {
            Some(k) => {
                let locked = gone.remove(k);
                out.push(Difference::Changed {
                    locked: locked.clone(),
                    found: found.clone(),
                });
            }
            None => unpaired.push(found),
        }
    }
    out.extend(gone.drain(..).map(|s| Difference::Disappeared(s.clone())));
    out.extend(
        unpaired
            .into_iter()
            .map(|s| Difference::Appeared(s.clone())),
    );
}

#[cfg(test)]
mod tests;
