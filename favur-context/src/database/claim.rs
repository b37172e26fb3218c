//! One writer per session: who holds a session's claim, its fencing epoch and lease, and
//! the decisions every database store takes the same way.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::database::StoreError;

/// The claim row of a session as read inside the claiming transaction.
#[derive(Debug, Clone)]
pub(crate) struct Holder {
    /// The fencing epoch of the last claim (0: never claimed).
    pub(crate) epoch: i64,
    /// Its owner token, `None` once released.
    pub(crate) owner: Option<String>,
    /// Milliseconds its lease still runs (`<= 0`: expired).
    pub(crate) remaining_ms: i64,
}

/// The epoch a new claim by `me` takes, or [`StoreError::Claimed`] while another owner's
/// lease runs. The same owner may claim again (a process reopening its own session after
/// a lost connection): the old handle is fenced by the new epoch.
pub(crate) fn claim(session: &str, holder: &Holder, me: &str) -> Result<i64, StoreError> {
    match &holder.owner {
        Some(owner) if owner != me && holder.remaining_ms > 0 => Err(StoreError::Claimed {
            session: session.to_owned(),
            owner: owner.clone(),
            remaining_ms: holder.remaining_ms,
        }),
        _ => Ok(holder.epoch.saturating_add(1)),
    }
}

/// `Ok` while the session's epoch, read in the writing transaction (`None`: the session
/// has no claim row), is still `mine`.
pub(crate) fn still_mine(session: &str, found: Option<i64>, mine: i64) -> Result<(), StoreError> {
    if found == Some(mine) {
        return Ok(());
    }
    Err(StoreError::Fenced {
        session: session.to_owned(),
        epoch: mine.max(0) as u64,
    })
}

/// A fresh owner token: process id, time and a counter, unique across this machine's
/// processes and every store opened by this one.
pub(crate) fn owner_token() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "pid{}-{nanos:x}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Milliseconds since the Unix epoch on this machine's clock (the SQLite store's lease
/// clock; the PostgreSQL store uses the server's).
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_claim_of_another_owner_is_refused_an_expired_one_taken_over() {
        let live = Holder {
            epoch: 4,
            owner: Some("a".into()),
            remaining_ms: 10,
        };
        assert!(matches!(
            claim("s", &live, "b"),
            Err(StoreError::Claimed {
                remaining_ms: 10,
                ..
            })
        ));
        assert_eq!(claim("s", &live, "a").unwrap(), 5);
        let expired = Holder {
            remaining_ms: 0,
            ..live.clone()
        };
        assert_eq!(claim("s", &expired, "b").unwrap(), 5);
        let released = Holder {
            owner: None,
            ..live
        };
        assert_eq!(claim("s", &released, "b").unwrap(), 5);
        assert!(still_mine("s", Some(5), 5).is_ok());
        assert!(matches!(
            still_mine("s", Some(6), 5),
            Err(StoreError::Fenced { epoch: 5, .. })
        ));
        assert!(matches!(
            still_mine("s", None, 5),
            Err(StoreError::Fenced { epoch: 5, .. })
        ));
        assert_ne!(owner_token(), owner_token());
    }
}
