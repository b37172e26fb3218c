//! `favur-context sites`: the sites as a table, checked against a lockfile.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::{Site, SitesError, scan};

/// The sites as a Markdown table: `file:line`, item, kind, what, class.
pub fn render_table(sites: &[Site]) -> String {
    let mut out = String::from("| site | item | kind | what | class |\n|---|---|---|---|---|\n");
    for s in sites {
        let item = if s.item.is_empty() { "(file)" } else { &s.item };
        let _ = writeln!(
            out,
            "| {}:{} | {item} | {} | `{}` | {} |",
            s.file, s.line, s.kind, s.what, s.class
        );
    }
    out
}

/// Arguments of `favur-context sites`.
#[derive(Debug, Clone, clap::Args)]
pub struct SitesArgs {
    /// A Rust file or a directory to scan (`target` and hidden directories are skipped).
    pub path: PathBuf,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Compare with this lockfile and fail, naming each difference, if a site's class
    /// changed or a site appeared or disappeared.
    #[arg(long, conflicts_with = "write")]
    pub check: Option<PathBuf>,
    /// Write the sites found to this lockfile.
    #[arg(long)]
    pub write: Option<PathBuf>,
}

/// What `favur-context sites` prints, and whether it succeeded.
///
/// See [`sites_command`] for an example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitesOutcome {
    /// Standard output.
    pub stdout: String,
    /// Standard error (the differences, for a failed check).
    pub stderr: String,
    /// Whether to exit with success.
    pub success: bool,
}

/// Runs `favur-context sites`.
///
/// # Errors
///
/// An unreadable path, a file that is not valid Rust, or a bad lockfile.
pub fn sites_command(args: &SitesArgs) -> Result<SitesOutcome, SitesError> {
    let found = scan(&args.path)?;
    let listing = if args.json {
        serde_json::to_string_pretty(&found).unwrap_or_default() + "\n"
    } else {
        render_table(&found)
    };
    if let Some(lock) = &args.write {
        super::lockfile::write(lock, &found)?;
        return Ok(SitesOutcome {
            stdout: format!("{} sites written to {}\n", found.len(), lock.display()),
            stderr: String::new(),
            success: true,
        });
    }
    let Some(lock) = &args.check else {
        return Ok(SitesOutcome {
            stdout: listing,
            stderr: String::new(),
            success: true,
        });
    };
    let locked = super::lockfile::read(lock)?;
    let differences = super::lockfile::diff(&locked, &found);
    if differences.is_empty() {
        return Ok(SitesOutcome {
            stdout: format!("{} sites match {}\n", found.len(), lock.display()),
            stderr: String::new(),
            success: true,
        });
    }
    let mut stderr = format!(
        "{} classification site(s) differ from {}:\n",
        differences.len(),
        lock.display()
    );
    for d in &differences {
        let _ = writeln!(stderr, "  {d}");
    }
    let _ = writeln!(
        stderr,
        "If the change is intended, review it and run `favur-context sites {} --write {}`.",
        args.path.display(),
        lock.display()
    );
    Ok(SitesOutcome {
        stdout: String::new(),
        stderr,
        success: false,
    })
}
