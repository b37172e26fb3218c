//! What the audit says per classification site: its key, its figures, and the order the
//! report lists sites in.

use std::collections::BTreeMap;
use std::num::NonZeroU8;

use serde::Serialize;

use crate::model::retention::Retention;
use crate::model::site::CallSite;

/// The key a site is grouped by: `file:line:column` for code, and for imported
/// transcripts (`import:<format>/<rule>`, whose line is the message index) the file part
/// alone, so that every message a rule classified counts for that rule.
///
/// ```
/// use favur_context::audit::site_key;
/// use favur_context::message::CallSite;
/// assert_eq!(site_key(&CallSite::new("src/agent.rs", 12, 5)), "src/agent.rs:12:5");
/// let imported = CallSite::from_parts("import:mini-swe-agent/file views".into(), 41, 1);
/// assert_eq!(site_key(&imported), "import:mini-swe-agent/file views");
/// ```
pub fn site_key(site: &CallSite) -> String {
    if site.file().starts_with("import:") {
        site.file().to_owned()
    } else {
        site.to_string()
    }
}

/// The figures of one call site (with one class): see [`Ledger::sites`](crate::audit::Ledger::sites).
///
/// ```
/// use favur_context::audit::SiteStats;
/// let mut a = SiteStats::new("src/a.rs:3:9", favur_context::Retention::Fuzzy);
/// a.entries = 2;
/// a.dropped.insert(std::num::NonZeroU8::new(2).unwrap(), 1);
/// let mut b = a.clone();
/// b.regrets = 1;
/// a.merge(&b);
/// assert_eq!((a.entries, a.left_view(), a.regrets), (4, 2, 1));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SiteStats {
    /// The site ([`site_key`]).
    pub site: String,
    /// The class it gave.
    pub class: Retention,
    /// Entries it appended (or pinned).
    pub entries: u64,
    /// Their tokens.
    pub tokens: u64,
    /// Of those, tokens still in the view (pinned entries count: they are in every
    /// request).
    pub tokens_in_view: u64,
    /// Entries whose content is still in the view.
    pub kept: u64,
    /// Entries summarized, by the tier that summarized them.
    pub summarized: BTreeMap<NonZeroU8, u64>,
    /// Entries dropped, by the tier that dropped them (including entries whose summary
    /// was dropped later).
    pub dropped: BTreeMap<NonZeroU8, u64>,
    /// Regret events whose evicted entry this site classified.
    pub regrets: u64,
    /// Tokens those re-fetches cost.
    pub regret_tokens: u64,
    /// Regret events by kind ([`RegretKind::label`](crate::audit::RegretKind::label)).
    pub regret_kinds: BTreeMap<String, u64>,
}

impl SiteStats {
    /// Empty figures for a site.
    ///
    /// See [`SiteStats`] for an example.
    pub fn new(site: impl Into<String>, class: Retention) -> Self {
        SiteStats {
            site: site.into(),
            class,
            entries: 0,
            tokens: 0,
            tokens_in_view: 0,
            kept: 0,
            summarized: BTreeMap::new(),
            dropped: BTreeMap::new(),
            regrets: 0,
            regret_tokens: 0,
            regret_kinds: BTreeMap::new(),
        }
    }

    /// Entries whose content left the view (summarized or dropped).
    ///
    /// See [`SiteStats`] for an example.
    pub fn left_view(&self) -> u64 {
        self.summarized.values().sum::<u64>() + self.dropped.values().sum::<u64>()
    }

    /// Adds the figures of the same site from another history.
    ///
    /// See [`SiteStats`] for an example.
    pub fn merge(&mut self, o: &SiteStats) {
        self.entries += o.entries;
        self.tokens += o.tokens;
        self.tokens_in_view += o.tokens_in_view;
        self.kept += o.kept;
        for (t, n) in &o.summarized {
            *self.summarized.entry(*t).or_default() += n;
        }
        for (t, n) in &o.dropped {
            *self.dropped.entry(*t).or_default() += n;
        }
        self.regrets += o.regrets;
        self.regret_tokens += o.regret_tokens;
        for (k, n) in &o.regret_kinds {
            *self.regret_kinds.entry(k.clone()).or_default() += n;
        }
    }
}

/// Sorts site figures most regret first, then most regret tokens, then by site and class
/// (the order of [`Ledger::sites`](crate::audit::Ledger::sites)).
///
/// ```
/// use favur_context::audit::{SiteStats, sort_sites};
/// use favur_context::Retention;
/// let a = SiteStats::new("a.rs:1:1", Retention::Fuzzy);
/// let mut b = SiteStats::new("b.rs:1:1", Retention::Fuzzy);
/// b.regrets = 2;
/// let mut sites = vec![a, b];
/// sort_sites(&mut sites);
/// assert_eq!(sites[0].site, "b.rs:1:1");
/// ```
pub fn sort_sites(sites: &mut [SiteStats]) {
    sites.sort_by(|a, b| {
        b.regrets
            .cmp(&a.regrets)
            .then(b.regret_tokens.cmp(&a.regret_tokens))
            .then_with(|| a.site.cmp(&b.site))
            .then(a.class.cmp(&b.class))
    });
}
