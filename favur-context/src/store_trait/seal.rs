//! Tamper-evident records: a keyed MAC (HMAC-SHA-256) on every record of a store, each
//! chained to the one before it, for the journal and the database stores alike.
//!
//! `mac_n = HMAC(key, DOMAIN || len(id) || id || n || mac_{n-1} || record bytes as stored)`,
//! with `mac_{-1}` all zeros. The id names the chain (a journal's random id, a database
//! session's name and settings), so a record cannot move to another place, another store
//! or another session sealed with the same key without failing to verify.

use std::fmt;
use std::sync::Arc;

use hmac::{Hmac, KeyInit, Mac as _};
use sha2::Sha256;

/// What every MAC starts with: this scheme and its version.
const DOMAIN: &[u8] = b"favur-context seal v1\0";

/// The shortest key accepted, in bytes.
pub const MIN_SEAL_KEY_BYTES: usize = 32;

/// A keyed MAC of one record: 32 bytes.
pub(crate) type Mac = [u8; 32];

/// The application's secret that seals a store's records (HMAC-SHA-256): at least
/// [`MIN_SEAL_KEY_BYTES`] bytes, supplied by the application and never stored beside the
/// data. `Debug` never prints it.
///
/// ```
/// use favur_context::store::SealKey;
/// let key = SealKey::new([7u8; 32])?;
/// assert_eq!(format!("{key:?}"), "SealKey(..)");
/// assert!(SealKey::new(b"too short").is_err());
/// # Ok::<(), favur_context::store::SealKeyError>(())
/// ```
#[derive(Clone)]
pub struct SealKey {
    /// The HMAC state with the key absorbed: each MAC starts from a copy.
    keyed: Hmac<Sha256>,
}

impl fmt::Debug for SealKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SealKey(..)")
    }
}

/// A seal key shorter than [`MIN_SEAL_KEY_BYTES`].
///
/// ```
/// let e = favur_context::store::SealKey::new([1u8; 8]).unwrap_err();
/// assert_eq!(e.to_string(), "a seal key needs at least 32 bytes, not 8");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a seal key needs at least {MIN_SEAL_KEY_BYTES} bytes, not {len}")]
pub struct SealKeyError {
    /// The length given.
    pub len: usize,
}

impl SealKey {
    /// A key from `bytes` (at least [`MIN_SEAL_KEY_BYTES`], ideally random).
    ///
    /// # Errors
    ///
    /// [`SealKeyError`] for a shorter key.
    ///
    /// ```
    /// assert!(favur_context::store::SealKey::new(vec![0x5a; 64]).is_ok());
    /// ```
    pub fn new(bytes: impl AsRef<[u8]>) -> Result<SealKey, SealKeyError> {
        let bytes = bytes.as_ref();
        if bytes.len() < MIN_SEAL_KEY_BYTES {
            return Err(SealKeyError { len: bytes.len() });
        }
        // HMAC takes a key of any length: this cannot fail.
        let keyed = <Hmac<Sha256> as KeyInit>::new_from_slice(bytes)
            .map_err(|_| SealKeyError { len: bytes.len() })?;
        Ok(SealKey { keyed })
    }

    /// The MAC of the record `bytes` at `seq` of chain `id`, after `prev`.
    fn mac(&self, id: &[u8], seq: u64, prev: &Mac, bytes: &[u8]) -> Hmac<Sha256> {
        let mut m = self.keyed.clone();
        m.update(DOMAIN);
        m.update(&(id.len() as u64).to_be_bytes());
        m.update(id);
        m.update(&seq.to_be_bytes());
        m.update(prev);
        m.update(bytes);
        m
    }

    /// A fresh chain id (32 hex digits) for a new journal: unique per call, derived with
    /// the key from the time, the process and a counter.
    pub(crate) fn fresh_id(&self) -> String {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let mut m = self.keyed.clone();
        m.update(b"favur-context journal id\0");
        m.update(&nanos.to_be_bytes());
        m.update(&std::process::id().to_be_bytes());
        m.update(&COUNT.fetch_add(1, Ordering::Relaxed).to_be_bytes());
        let tag = m.finalize().into_bytes();
        hex(&tag[..16])
    }
}

/// What is wrong with a sealed record, or with sealing a store.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Tamper {
    /// The record's MAC does not verify: it, or the chain before it, was changed, or the
    /// key is another.
    #[error(
        "its MAC does not verify (the record, or one before it, was edited, added or removed, or the key is not the store's)"
    )]
    Mac,
    /// A record of a sealed store carries no MAC (or a malformed one).
    #[error("it carries no valid MAC in a sealed store")]
    Unmarked,
    /// A seal key was given, and the store is not sealed (its records carry no MAC: an
    /// attacker may have stripped them). Convert it explicitly: export it and import it
    /// with the key.
    #[error(
        "the store is not sealed but a seal key was given (convert it explicitly: export it, then import it with the key)"
    )]
    NotSealed,
    /// The store is sealed and no key was given: it is not loaded unverified.
    #[error("the store is sealed; open it with its seal key")]
    KeyNeeded,
}

/// The newest record of a sealed store: its sequence number and MAC. Keep it outside
/// the store (with the application's state, say) and compare it on the next open: the
/// data alone cannot show that its newest records were removed (tail truncation).
///
/// ```
/// use favur_context::store::SealHead;
/// let head = SealHead { seq: 3, mac: [0xab; 32] };
/// assert!(head.mac_hex().starts_with("abab"));
/// assert_eq!(head.mac_hex().len(), 64);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SealHead {
    /// The newest record's sequence number (a journal's header is 0, its first record 1;
    /// a database session's first row is 0).
    pub seq: u64,
    /// Its MAC.
    pub mac: [u8; 32],
}

impl SealHead {
    /// The MAC in lowercase hex, as a journal line holds it.
    pub fn mac_hex(&self) -> String {
        hex(&self.mac)
    }
}

/// A chain of sealed records being written or read: the key, the chain's id, the next
/// sequence number and the MAC before it.
#[derive(Clone)]
pub(crate) struct Chain {
    key: Arc<SealKey>,
    id: Vec<u8>,
    next: u64,
    prev: Mac,
}

impl fmt::Debug for Chain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chain")
            .field("next", &self.next)
            .finish_non_exhaustive()
    }
}

impl Chain {
    /// A new chain named `id`, starting at sequence `first`.
    pub(crate) fn new(key: Arc<SealKey>, id: &[u8], first: u64) -> Chain {
        Chain {
            key,
            id: id.to_vec(),
            next: first,
            prev: [0; 32],
        }
    }

    /// The newest record sealed or verified, if any.
    pub(crate) fn head(&self, first: u64) -> Option<SealHead> {
        (self.next > first).then(|| SealHead {
            seq: self.next - 1,
            mac: self.prev,
        })
    }

    /// The MAC the next record, `bytes`, takes (the chain moves on only with
    /// [`advance`](Chain::advance), once the record is stored).
    pub(crate) fn seal(&self, bytes: &[u8]) -> Mac {
        let tag = self
            .key
            .mac(&self.id, self.next, &self.prev, bytes)
            .finalize()
            .into_bytes();
        let mut mac = [0; 32];
        mac.copy_from_slice(&tag);
        mac
    }

    /// The record `mac` is stored: the chain moves on.
    pub(crate) fn advance(&mut self, mac: Mac) {
        self.prev = mac;
        self.next = self.next.saturating_add(1);
    }

    /// Checks that `mac` (hex, as stored) seals `bytes` as the next record, in constant
    /// time, and moves on; `Err` and the chain unchanged if not.
    pub(crate) fn verify(&mut self, mac_hex: &[u8], bytes: &[u8]) -> Result<(), Tamper> {
        let mac = self.check(mac_hex, bytes)?;
        self.advance(mac);
        Ok(())
    }

    /// Checks, in constant time, that `mac` (hex, as stored) seals `bytes` as the next
    /// record, without moving on; the MAC.
    pub(crate) fn check(&self, mac_hex: &[u8], bytes: &[u8]) -> Result<Mac, Tamper> {
        let mac = unhex(mac_hex).ok_or(Tamper::Unmarked)?;
        verify_at(&self.key, &self.id, self.next, &self.prev, bytes, &mac)?;
        Ok(mac)
    }

    /// The key and id, to check a record read back later ([`verify_at`]).
    pub(crate) fn key(&self) -> &Arc<SealKey> {
        &self.key
    }

    /// The chain's id.
    pub(crate) fn id(&self) -> &[u8] {
        &self.id
    }
}

/// Checks, in constant time, that `mac` seals `bytes` at `seq` of chain `id` after `prev`.
pub(crate) fn verify_at(
    key: &SealKey,
    id: &[u8],
    seq: u64,
    prev: &Mac,
    bytes: &[u8],
    mac: &Mac,
) -> Result<(), Tamper> {
    key.mac(id, seq, prev, bytes)
        .verify_slice(mac)
        .map_err(|_| Tamper::Mac)
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// The 32 bytes that 64 lowercase hex digits spell, if they do.
pub(crate) fn unhex(text: &[u8]) -> Option<Mac> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    if text.len() != 64 {
        return None;
    }
    let mut mac = [0; 32];
    for (i, pair) in text.chunks_exact(2).enumerate() {
        mac[i] = digit(pair[0])? << 4 | digit(pair[1])?;
    }
    Some(mac)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> Arc<SealKey> {
        Arc::new(SealKey::new([b; 32]).unwrap())
    }

    #[test]
    fn a_chain_verifies_what_it_sealed_and_nothing_else() {
        let mut w = Chain::new(key(1), b"s", 0);
        let mut macs = Vec::new();
        for body in [&b"a"[..], b"bb", b"ccc"] {
            let m = w.seal(body);
            w.advance(m);
            macs.push(hex(&m));
        }
        let mut r = Chain::new(key(1), b"s", 0);
        r.verify(macs[0].as_bytes(), b"a").unwrap();
        // Skipping a record, or changing one, breaks the chain.
        assert_eq!(r.verify(macs[2].as_bytes(), b"ccc"), Err(Tamper::Mac));
        assert_eq!(r.verify(macs[1].as_bytes(), b"bB"), Err(Tamper::Mac));
        r.verify(macs[1].as_bytes(), b"bb").unwrap();
        assert_eq!(r.head(0).unwrap().seq, 1);
        // Another key, another id, a bad hex: refused.
        let mut other = Chain::new(key(2), b"s", 0);
        assert_eq!(other.verify(macs[0].as_bytes(), b"a"), Err(Tamper::Mac));
        let mut other = Chain::new(key(1), b"t", 0);
        assert_eq!(other.verify(macs[0].as_bytes(), b"a"), Err(Tamper::Mac));
        assert_eq!(other.verify(b"zz", b"a"), Err(Tamper::Unmarked));
    }

    #[test]
    fn hex_round_trips_and_fresh_ids_differ() {
        let m = [0x0f; 32];
        assert_eq!(unhex(hex(&m).as_bytes()), Some(m));
        assert_eq!(unhex(hex(&m).to_uppercase().as_bytes()), None);
        let k = key(3);
        assert_ne!(k.fresh_id(), k.fresh_id());
        assert_eq!(k.fresh_id().len(), 32);
    }
}
