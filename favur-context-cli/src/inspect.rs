//! The `inspect` command: one history as a self-contained HTML page (no network, no
//! server, no external resource): the usage timeline of its requests stacked by band with
//! each compaction's tier (choosing a request shows what it carried: [`timeline_html`]),
//! its sites with their ledger figures, its regret events, and every entry with its site,
//! class, fate and text, the evicted entries that were needed again marked.
//!
//! Everything that comes from a history (message text, tool output, call arguments, file
//! names, rule names) is data: it is escaped before it is written, in text and in
//! attributes alike ([`escape_html`]); the page's one script handles numbers and clones
//! rows the browser already parsed as text.

mod timeline;

pub use timeline::timeline_html;

use std::collections::{BTreeMap, HashSet};
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use favur_context::audit::{Fate, Ledger, site_key};
use favur_context::message::EntryKind;
use favur_context::tools::RecallTool;
use favur_context::{EntryId, History};

use crate::audit_error::AuditError;
use crate::observe::{ObserveArgs, load_audited};

/// Arguments of `favur-context inspect`.
#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// A journal, a saved history or a transcript (as for `audit`).
    pub file: PathBuf,
    /// Where to write the page.
    #[arg(long)]
    pub out: PathBuf,
    /// Rules, policy and format for transcripts.
    #[command(flatten)]
    pub observe: ObserveArgs,
}

/// Text made safe for HTML text and attribute values: `&`, `<`, `>`, `"` and `'` become
/// character references.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// At most `max` characters of `text`, with `…` when cut.
fn excerpt(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Characters of an entry's text shown on the page.
pub const EXCERPT_CHARS: usize = 2_000;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}\
th{background:#f3f3f3}pre{white-space:pre-wrap;margin:0;max-width:70em;font-size:.85em}\
tr.fate-summarized{background:#fff8e0}tr.fate-dropped{background:#fde8e8}tr.regretted td:first-child{border-left:4px solid #c00}\
td.num{text-align:right}";

fn fate_name(fate: Option<Fate>, kind: &EntryKind) -> (&'static str, String) {
    match (kind, fate) {
        (EntryKind::Summary { .. }, _) => ("summary", "summary".to_owned()),
        (EntryKind::Pinned, _) => ("pinned", "pinned".to_owned()),
        (_, Some(f @ Fate::Kept)) => ("kept", f.to_string()),
        (_, Some(f @ Fate::Summarized { .. })) => ("summarized", f.to_string()),
        (_, Some(f @ Fate::Dropped { .. })) => ("dropped", f.to_string()),
        (_, None) => ("unseen", "not observed".to_owned()),
    }
}

/// The page for a history and its ledger.
pub fn render_html(source: &str, history: &History, ledger: &Ledger) -> String {
    let mut out = String::new();
    let title = escape_html(&format!("favur-context inspect: {source}"));
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{STYLE}{}</style></head>\n<body>\n<h1>{title}</h1>\n",
        timeline::STYLE
    );
    let _ = writeln!(
        out,
        "<p id=\"summary\">{} entries, {} in the view, {} compactions, {} regret events.</p>",
        history.len(),
        history.view().len(),
        history.compactions().len(),
        ledger.regrets().len()
    );
    out.push_str(&timeline_html(ledger));

    sites_table(&mut out, ledger);
    let regretted = regrets_list(&mut out, ledger);
    entries_table(&mut out, history, ledger, &regretted);
    out.push_str("</body></html>\n");
    out
}

/// The sites table: each site's entries, tokens, what left the view, its regret.
fn sites_table(out: &mut String, ledger: &Ledger) {
    out.push_str("<h2>Sites</h2>\n<table id=\"sites\"><thead><tr><th>site</th><th>class</th><th>entries</th><th>tokens</th><th>in view</th><th>kept</th><th>left the view</th><th>regret</th><th>re-fetch tokens</th></tr></thead><tbody>\n");
    for s in ledger.sites() {
        let _ = writeln!(
            out,
            "<tr class=\"site\" data-class=\"{}\"><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            s.class,
            escape_html(&s.site),
            s.class,
            s.entries,
            s.tokens,
            s.tokens_in_view,
            s.kept,
            s.left_view(),
            s.regrets,
            s.regret_tokens
        );
    }
    out.push_str("</tbody></table>\n");
}

/// The regret events, numbered; per entry, the events that name it.
fn regrets_list(out: &mut String, ledger: &Ledger) -> BTreeMap<EntryId, Vec<usize>> {
    out.push_str("<h2>Regret events</h2>\n<ol id=\"regrets\">\n");
    let mut regretted: BTreeMap<EntryId, Vec<usize>> = BTreeMap::new();
    for (n, e) in ledger.regrets().iter().enumerate() {
        regretted.entry(e.evicted).or_default().push(n);
        let _ = writeln!(
            out,
            "<li class=\"regret\" id=\"r{n}\" data-kind=\"{}\"><a href=\"#e{}\">{}</a>: {}</li>",
            escape_html(e.kind.label()),
            e.evicted.0,
            e.evicted,
            escape_html(&e.to_string())
        );
    }
    out.push_str("</ol>\n");
    regretted
}

/// The entries table: each held entry's fate, tokens, site, regret links and text.
fn entries_table(
    out: &mut String,
    history: &History,
    ledger: &Ledger,
    regretted: &BTreeMap<EntryId, Vec<usize>>,
) {
    out.push_str("<h2>Entries</h2>\n<table id=\"entries\"><thead><tr><th>id</th><th>role</th><th>class</th><th>fate</th><th>tokens</th><th>site</th><th>regret</th><th>text</th></tr></thead><tbody>\n");
    let held: HashSet<EntryId> = history.entries().iter().map(|e| e.id()).collect();
    for e in history.entries() {
        let (fate_class, fate) = fate_name(ledger.fate(e.id()), e.kind());
        let events = regretted.get(&e.id()).map_or(&[][..], Vec::as_slice);
        let marker = if events.is_empty() { "" } else { " regretted" };
        let links: Vec<String> = events
            .iter()
            .map(|n| format!("<a href=\"#r{n}\">event {}</a>", n + 1))
            .collect();
        let text = excerpt(&RecallTool.render(e), EXCERPT_CHARS);
        let _ = writeln!(
            out,
            "<tr class=\"entry fate-{fate_class}{marker}\" id=\"e{}\" data-class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td><code>{}</code></td><td>{}</td><td><pre>{}</pre></td></tr>",
            e.id().0,
            e.retention(),
            e.id(),
            e.message().role,
            e.retention(),
            escape_html(&fate),
            e.tokens(),
            escape_html(&site_key(e.site())),
            links.join(" "),
            escape_html(&text)
        );
    }
    out.push_str("</tbody></table>\n");
    let missing = history.len() as u64 - held.len() as u64;
    if missing > 0 {
        let _ = writeln!(
            out,
            "<p id=\"missing\">{missing} originals are not held in memory and not shown.</p>"
        );
    }
}

/// Runs `favur-context inspect`: writes the page and returns what it wrote.
///
/// # Errors
///
/// What loading the file can fail with (see `audit`), or the page not being writable.
pub fn inspect_command(args: &InspectArgs) -> Result<String, AuditError> {
    let (policy, rules) = args.observe.load()?;
    let loaded = load_audited(
        &args.file,
        rules.as_ref(),
        policy.as_ref(),
        args.observe.format,
        &args.observe.journal_options()?,
    )?;
    let page = render_html(
        &args.file.display().to_string(),
        &loaded.history,
        &loaded.ledger,
    );
    std::fs::write(&args.out, page).map_err(|source| AuditError::Write {
        file: args.out.clone(),
        source,
    })?;
    Ok(format!(
        "wrote {}: {} entries, {} sites, {} regret events\n",
        args.out.display(),
        loaded.history.len(),
        loaded.ledger.sites().len(),
        loaded.ledger.regrets().len()
    ))
}

#[cfg(test)]
mod tests;
