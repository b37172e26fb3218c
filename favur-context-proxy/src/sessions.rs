//! Every session the proxy serves: a session key names a family of branches; a request
//! continues the branch whose messages its transcript extends, or starts a new branch
//! when the client edited or rewound its transcript (the recorded branch is never
//! changed). After a restart, a family is read back from the store on its first request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use favur_context::Policy;
use serde::Serialize;

use crate::branch::{Branch, journal_path};
use crate::config::StoreSpec;
use crate::error::ProxyError;

/// The branches of one session key.
pub(crate) struct Family {
    key: String,
    pub branches: Vec<Branch>,
}

impl Family {
    /// The index of the branch a transcript with `digests` continues: the longest branch
    /// whose every message the transcript repeats. Opens a new branch if none.
    pub fn choose(
        &mut self,
        digests: &[u64],
        spec: &StoreSpec,
        policy: &Policy,
    ) -> Result<usize, ProxyError> {
        let best = self
            .branches
            .iter()
            .enumerate()
            .filter(|(_, b)| b.common_prefix(digests) == b.len())
            .max_by_key(|(_, b)| b.len())
            .map(|(i, _)| i);
        if let Some(i) = best {
            return Ok(i);
        }
        let name = branch_name(&self.key, self.branches.len());
        tracing::info!(session = %self.key, branch = %name, "transcript diverged: new branch");
        self.branches.push(Branch::open(spec, &name, policy)?);
        Ok(self.branches.len() - 1)
    }

    fn load(key: &str, spec: &StoreSpec, policy: &Policy) -> Result<Family, ProxyError> {
        let mut branches = Vec::new();
        loop {
            let name = branch_name(key, branches.len());
            if let StoreSpec::Journal(dir) = spec
                && !branches.is_empty()
                && !journal_path(dir, &name).exists()
            {
                break;
            }
            let branch = Branch::open(spec, &name, policy)?;
            let empty = branch.len() == 0;
            branches.push(branch);
            // An empty branch ends the family (a SQLite or PostgreSQL probe opens one; it is kept as
            // the branch a new line takes).
            if empty || matches!(spec, StoreSpec::Memory) {
                break;
            }
        }
        Ok(Family {
            key: key.to_owned(),
            branches,
        })
    }
}

/// The store name of branch `n` of session `key`.
fn branch_name(key: &str, n: usize) -> String {
    format!("{key}.{n}")
}

/// All sessions in memory, each behind its own lock (requests of one session are served
/// in order; sessions run in parallel), with when each last served a request.
#[derive(Default)]
pub(crate) struct Sessions {
    families: Mutex<HashMap<String, Loaded>>,
}

/// A session in memory and when it last served a request.
type Loaded = (Arc<Mutex<Family>>, Instant);

/// What `/favur/sessions` shows of one branch.
#[derive(Debug, Serialize)]
pub struct BranchInfo {
    /// The session key.
    pub session: String,
    /// The branch's store name.
    pub branch: String,
    /// Messages recorded.
    pub messages: usize,
    /// Entries in the view now.
    pub view_entries: usize,
    /// Usage of the next request in tokens.
    pub usage_tokens: u64,
    /// Requests served since the proxy started.
    pub requests: u64,
    /// Compactions made since the proxy started.
    pub compactions: u64,
    /// Compactions recorded in the branch over its life.
    pub recorded_compactions: usize,
}

impl Sessions {
    /// The family of `key`, read back from the store the first time.
    pub fn family(
        &self,
        key: &str,
        spec: &StoreSpec,
        policy: &Policy,
    ) -> Result<Arc<Mutex<Family>>, ProxyError> {
        let mut map = self.families.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((f, used)) = map.get_mut(key) {
            *used = Instant::now();
            return Ok(Arc::clone(f));
        }
        let family = Arc::new(Mutex::new(Family::load(key, spec, policy)?));
        map.insert(key.to_owned(), (Arc::clone(&family), Instant::now()));
        Ok(family)
    }

    /// Marks the session of `key` as used now (at the end of a request: idle time counts
    /// from there).
    pub fn touch(&self, key: &str) {
        let mut map = self.families.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, used)) = map.get_mut(key) {
            *used = Instant::now();
        }
    }

    /// Lets go of the session of `key` (its store keeps it; it is read back on its next
    /// request): after another proxy on the same database took it over.
    pub fn forget(&self, key: &str) {
        let mut map = self.families.lock().unwrap_or_else(PoisonError::into_inner);
        map.remove(key);
    }

    /// Lets go of every session that served no request for `idle` and has none in
    /// flight (its store keeps it; it is read back on its next request). Returns how many.
    pub fn unload_idle(&self, idle: Duration) -> usize {
        let mut map = self.families.lock().unwrap_or_else(PoisonError::into_inner);
        let before = map.len();
        map.retain(|_, (f, used)| used.elapsed() < idle || Arc::strong_count(f) > 1);
        before - map.len()
    }

    /// Every branch with messages of every session in memory (served since the proxy
    /// started and not let go as idle).
    pub fn list(&self) -> Vec<BranchInfo> {
        let families: Vec<_> = {
            let map = self.families.lock().unwrap_or_else(PoisonError::into_inner);
            map.values().map(|(f, _)| Arc::clone(f)).collect()
        };
        let mut out = Vec::new();
        for f in families {
            let f = f.lock().unwrap_or_else(PoisonError::into_inner);
            // An empty branch (a fresh session's, or the spare a database probe opened)
            // holds nothing to show.
            for b in f.branches.iter().filter(|b| b.len() > 0) {
                let h = b.history();
                out.push(BranchInfo {
                    session: f.key.clone(),
                    branch: b.name.clone(),
                    messages: b.len(),
                    view_entries: h.view().len(),
                    usage_tokens: h.usage_tokens(),
                    requests: b.requests,
                    compactions: b.compactions,
                    recorded_compactions: h.compactions().len(),
                });
            }
        }
        out.sort_by(|a, b| a.branch.cmp(&b.branch));
        out
    }
}
