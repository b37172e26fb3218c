//! Sealed database sessions ([`SessionOptions::seal_key`](super::SessionOptions::seal_key)):
//! every row's `mac` column holds the MAC of its body, chained over the rows before it
//! (see [`SealKey`]); the chain's id is the session's name, framing tokens and counter,
//! so neither can change under a sealed session.

use std::sync::Arc;

use crate::database::StoreError;
use crate::store_trait::seal::{Chain, Mac, SealKey, Tamper, unhex, verify_at};

/// The chain id of `session` with `framing` tokens and `counter`.
pub(crate) fn chain_id(session: &str, framing: u32, counter: &str) -> Vec<u8> {
    format!("sql/{}/{session}/{framing}/{counter}", session.len()).into_bytes()
}

/// The tampering of `session` at `seq`.
pub(crate) fn tampered(session: &str, seq: i64, problem: Tamper) -> StoreError {
    StoreError::Tampered {
        session: session.to_owned(),
        seq: seq.max(0) as u64,
        problem,
    }
}

/// A session's seal while its rows are replayed, then while it is written: the key given,
/// and the chain once it is known (from the first row, or a new session).
#[derive(Debug, Clone, Default)]
pub(crate) struct RowSeal {
    key: Option<(Arc<SealKey>, Vec<u8>)>,
    chain: Option<Chain>,
}

impl RowSeal {
    /// The seal of a session whose chain id is `id`, with `key` if one was given.
    pub(crate) fn new(key: Option<&Arc<SealKey>>, id: Vec<u8>) -> RowSeal {
        RowSeal {
            key: key.map(|k| (Arc::clone(k), id)),
            chain: None,
        }
    }

    /// The key, in a sealed session.
    pub(crate) fn key(&self) -> Option<&Arc<SealKey>> {
        self.key.as_ref().map(|(k, _)| k)
    }

    /// The same seal before any row was checked: to check the rows again from the first.
    pub(crate) fn fresh(&self) -> RowSeal {
        RowSeal {
            key: self.key.clone(),
            chain: None,
        }
    }

    /// The key and chain id, to check a row read back later.
    pub(crate) fn reader(&self) -> Option<(Arc<SealKey>, Vec<u8>)> {
        self.key.clone()
    }

    /// Checks the row at `expected` (`mac` as stored) before it is replayed: sealed with
    /// the chain when a key was given, unsealed when not.
    pub(crate) fn check(
        &mut self,
        session: &str,
        expected: i64,
        mac: Option<&[u8]>,
        body: &[u8],
    ) -> Result<(), StoreError> {
        let fail = |problem| Err(tampered(session, expected, problem));
        let Some((key, id)) = &self.key else {
            return match mac {
                Some(_) => fail(Tamper::KeyNeeded),
                None => Ok(()),
            };
        };
        let Some(mac) = mac else {
            return match expected {
                0 => fail(Tamper::NotSealed),
                _ => fail(Tamper::Unmarked),
            };
        };
        let chain = self
            .chain
            .get_or_insert_with(|| Chain::new(Arc::clone(key), id, 0));
        chain
            .verify(mac, body)
            .map_err(|problem| tampered(session, expected, problem))
    }

    /// After the replay of `rows` rows: the chain new rows are sealed with (a sealed new
    /// session starts one).
    pub(crate) fn writing(&mut self, rows: i64) {
        if rows == 0
            && let Some((key, id)) = &self.key
        {
            self.chain = Some(Chain::new(Arc::clone(key), id, 0));
        }
    }

    /// The MAC (hex) of the next row, `body`, in a sealed session.
    pub(crate) fn seal(&self, body: &str) -> Option<String> {
        let chain = self.chain.as_ref()?;
        Some(crate::store_trait::seal::hex(&chain.seal(body.as_bytes())))
    }

    /// The row sealed with `mac` (hex) is committed: the chain moves on.
    pub(crate) fn advance(&mut self, mac: Option<&str>) {
        if let (Some(chain), Some(mac)) = (&mut self.chain, mac.and_then(|m| unhex(m.as_bytes()))) {
            chain.advance(mac);
        }
    }

    /// The newest row of a sealed session.
    pub(crate) fn head(&self) -> Option<crate::store_trait::seal::SealHead> {
        self.chain.as_ref()?.head(0)
    }
}

/// Checks a row read back, `body` at `seq` sealed with `mac` after `prev` (the MAC of the
/// row before it, as stored): a message saying what is wrong, if anything.
pub(crate) fn check_read_back(
    reader: &(Arc<SealKey>, Vec<u8>),
    seq: i64,
    body: &[u8],
    mac: Option<&[u8]>,
    prev: Option<&[u8]>,
) -> Result<(), String> {
    let tampered = |t: Tamper| format!("the row at sequence {seq} is tampered: {t}");
    let mac: Mac = mac
        .and_then(unhex)
        .ok_or_else(|| tampered(Tamper::Unmarked))?;
    let prev: Mac = match (seq, prev) {
        (0, _) => [0; 32],
        (_, Some(p)) => unhex(p).ok_or_else(|| tampered(Tamper::Unmarked))?,
        (_, None) => return Err(tampered(Tamper::Mac)),
    };
    let (key, id) = reader;
    verify_at(key, id, seq.max(0) as u64, &prev, body, &mac).map_err(tampered)
}
