//! Sealed journals ([`OpenOptions::seal_key`](super::OpenOptions::seal_key)): every line,
//! the header first, is `{"sealed":["<mac>",<record>]}`, the record exactly as an unsealed
//! journal holds it and the MAC chained over the lines before it (see
//! [`SealKey`](crate::store::SealKey)). The header names the journal's chain id
//! (`"seal":"<id>"`); the header is sequence 0, the first record 1.

use std::sync::{Arc, PoisonError, RwLock};

use super::error::Corruption;
use super::format::{LineError, header_seal};
use crate::store_trait::seal::{Chain, Mac, SealHead, SealKey, Tamper, hex, unhex, verify_at};

/// What a sealed line starts with.
pub(super) const SEALED_START: &[u8] = b"{\"sealed\":[\"";
const MID: &[u8] = b"\",";
const END: &[u8] = b"]}";

/// A sealed line's MAC (hex) and record, if it has that shape.
pub(super) fn split(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let rest = line.strip_prefix(SEALED_START)?;
    let mac = rest.get(..64)?;
    let inner = rest.get(64..)?.strip_prefix(MID)?.strip_suffix(END)?;
    Some((mac, inner))
}

/// Appends the sealed line of `inner` (without its `\n`) to `out`.
pub(super) fn wrap(out: &mut Vec<u8>, mac: &Mac, inner: &[u8]) {
    out.reserve(SEALED_START.len() + 64 + MID.len() + inner.len() + END.len());
    out.extend_from_slice(SEALED_START);
    out.extend_from_slice(hex(mac).as_bytes());
    out.extend_from_slice(MID);
    out.extend_from_slice(inner);
    out.extend_from_slice(END);
}

/// The record a journal line holds: a sealed line's record, or the line itself.
pub(crate) fn record_in_line(line: &[u8]) -> &[u8] {
    split(line).map_or(line, |(_, inner)| inner)
}

/// Whether the journal `text` (or its first line) is sealed.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn is_sealed(text: &[u8]) -> bool {
    text.starts_with(SEALED_START)
}

/// The chain id of the journal whose header says `"seal":"<id>"`.
pub(super) fn chain_id(id: &str) -> Vec<u8> {
    format!("journal/{id}").into_bytes()
}

/// The MACs of a sealed journal's lines, by sequence (the header is 0), with where each
/// line starts: what a record read back is checked against.
#[derive(Debug)]
pub(super) struct Marks {
    key: Arc<SealKey>,
    id: Vec<u8>,
    table: RwLock<Vec<(u64, Mac)>>,
}

impl Marks {
    fn push(&self, offset: u64, mac: Mac) {
        self.table
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push((offset, mac));
    }

    /// Checks the line read back at `offset` (without its `\n`) against the MAC recorded
    /// for it and the one before; the record it seals.
    pub(super) fn check<'a>(&self, offset: u64, line: &'a [u8]) -> Result<&'a [u8], String> {
        let table = self.table.read().unwrap_or_else(PoisonError::into_inner);
        let seq = table
            .binary_search_by_key(&offset, |m| m.0)
            .map_err(|_| "no sealed record starts there".to_owned())?;
        let tampered = |t: Tamper| format!("record {seq} is tampered: {t}");
        let (mac, inner) = split(line).ok_or_else(|| tampered(Tamper::Unmarked))?;
        let mac = unhex(mac).ok_or_else(|| tampered(Tamper::Unmarked))?;
        let prev = match seq {
            0 => [0; 32],
            n => table[n - 1].1,
        };
        if mac != table[seq].1 {
            return Err(tampered(Tamper::Mac));
        }
        verify_at(&self.key, &self.id, seq as u64, &prev, inner, &mac).map_err(tampered)?;
        Ok(inner)
    }
}

/// A sealed journal's writing side: its chain, and the MACs written.
#[derive(Debug)]
pub(super) struct Sealer {
    chain: Chain,
    pub(super) marks: Arc<Marks>,
}

impl Sealer {
    /// A sealer going on from `chain` (as read), whose lines so far are `table`.
    pub(super) fn new(chain: Chain, table: Vec<(u64, Mac)>) -> Sealer {
        let marks = Arc::new(Marks {
            key: Arc::clone(chain.key()),
            id: chain.id().to_vec(),
            table: RwLock::new(table),
        });
        Sealer { chain, marks }
    }

    /// The sealer of a new journal and the id its header names.
    pub(super) fn start(key: &Arc<SealKey>) -> (Sealer, String) {
        let id = key.fresh_id();
        let chain = Chain::new(Arc::clone(key), &chain_id(&id), 0);
        (Sealer::new(chain, Vec::new()), id)
    }

    /// The MAC of the next line, `inner`.
    pub(super) fn seal(&self, inner: &[u8]) -> Mac {
        self.chain.seal(inner)
    }

    /// The line sealed with `mac` is written at `offset`.
    pub(super) fn advance(&mut self, offset: u64, mac: Mac) {
        self.chain.advance(mac);
        self.marks.push(offset, mac);
    }

    /// The newest line written.
    pub(super) fn head(&self) -> Option<SealHead> {
        self.chain.head(0)
    }
}

/// A journal being read: the key given, and the chain once the header is read.
#[derive(Debug, Default)]
pub(super) struct Reading {
    pub(super) key: Option<Arc<SealKey>>,
    pub(super) chain: Option<Chain>,
    pub(super) table: Vec<(u64, Mac)>,
}

impl Reading {
    /// The header line as written (sealed or not): the header record itself.
    pub(super) fn header<'a>(&mut self, line: &'a [u8]) -> Result<&'a [u8], LineError> {
        if !line.starts_with(SEALED_START) {
            return Ok(line);
        }
        let Some(key) = &self.key else {
            return Err(LineError::Tampered(Tamper::KeyNeeded));
        };
        // A header that is not a whole sealed line is damage like any other (or, cut
        // before its `\n`, a header whose write was torn: a new journal).
        let (mac, inner) = split(line).ok_or(LineError::Corrupt(Corruption::InvalidHeader {
            message: "a sealed header that is not `{\"sealed\":[\"<mac>\",<header>]}`".into(),
        }))?;
        let id = header_seal(inner).ok_or(LineError::Tampered(Tamper::Unmarked))?;
        let mut chain = Chain::new(Arc::clone(key), &chain_id(&id), 0);
        chain.verify(mac, inner).map_err(LineError::Tampered)?;
        self.chain = Some(chain);
        Ok(inner)
    }

    /// After the header parsed: `Err` if a key was given and the journal is not sealed.
    pub(super) fn header_done(&self) -> Result<(), LineError> {
        match (&self.key, &self.chain) {
            (Some(_), None) => Err(LineError::Tampered(Tamper::NotSealed)),
            _ => Ok(()),
        }
    }

    /// A record line (after the header): the record it holds, verified in a sealed
    /// journal, and its MAC (the chain moves on with [`commit`](Reading::commit) once the
    /// record applied).
    pub(super) fn record<'a>(&self, line: &'a [u8]) -> Result<(&'a [u8], Option<Mac>), LineError> {
        let Some(chain) = &self.chain else {
            return Ok((line, None));
        };
        let Some((mac, inner)) = split(line) else {
            if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok() {
                return Err(LineError::Tampered(Tamper::Unmarked));
            }
            // Not JSON: damage (or a torn last line), said as for any journal.
            return Ok((line, None));
        };
        let mac = chain.check(mac, inner).map_err(LineError::Tampered)?;
        Ok((inner, Some(mac)))
    }

    /// The record sealed with `mac`, at `offset`, applied: the chain moves on.
    pub(super) fn commit(&mut self, offset: u64, mac: Option<Mac>) {
        if let (Some(chain), Some(mac)) = (&mut self.chain, mac) {
            chain.advance(mac);
            self.table.push((offset, mac));
        }
    }

    /// The header's MAC, once verified (its line starts at 0).
    pub(super) fn note_header(&mut self) {
        if let Some(head) = self.chain.as_ref().and_then(|c| c.head(0)) {
            self.table.push((0, head.mac));
        }
    }
}
