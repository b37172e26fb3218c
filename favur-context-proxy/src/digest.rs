//! What identifies a message and a session across requests: a message's digest (its
//! role, parts and provider fields as the library parsed them, without the engine's own
//! `favur_*` fields), and a session's key (the client's header, or the digest of the
//! transcript's first messages).

use favur_context::Message;
use favur_context::import::Format;

/// How many leading messages fingerprint a session that names none (the system prompt
/// and the task, for every agent this serves).
pub const FINGERPRINT_MESSAGES: usize = 2;

/// FNV-1a, 64 bits: stable across builds and platforms (the digests of a session are
/// recomputed from its store after a restart and must match those of the client's
/// next transcript).
#[derive(Debug, Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    const fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// The digest of a message as the library holds it: equal for the same message parsed
/// from the client's transcript and read back from the store.
///
/// ```
/// use favur_context::Message;
/// use favur_context_proxy::digest::message_digest;
/// let a = Message::user("fix the bug");
/// let keyed = a.clone().with_extension("favur_key", serde_json::json!("src/lib.rs"));
/// assert_eq!(message_digest(&a), message_digest(&keyed));
/// assert_ne!(message_digest(&a), message_digest(&Message::user("fix the bug.")));
/// ```
pub fn message_digest(message: &Message) -> u64 {
    let mut plain = message.clone();
    plain.extensions.retain(|k, _| !k.starts_with("favur_"));
    let mut h = Fnv::new();
    // A message always serializes (string keys, no non-finite floats it could hold).
    match serde_json::to_vec(&plain) {
        Ok(bytes) => h.write(&bytes),
        Err(e) => h.write(e.to_string().as_bytes()),
    }
    h.0
}

/// The key of a session: `h-NAME` for a client that names it in the session header (the
/// name kept when it is short and plain, its digest otherwise), else `f-` and the digest
/// of the format and the first [`FINGERPRINT_MESSAGES`] message digests. Keys are safe as
/// file names.
///
/// ```
/// use favur_context::import::Format;
/// use favur_context_proxy::digest::session_key;
/// assert_eq!(session_key(Some("build-42"), Format::OpenAi, &[1, 2, 3]), "h-build-42");
/// let a = session_key(None, Format::OpenAi, &[1, 2, 3]);
/// assert_eq!(a, session_key(None, Format::OpenAi, &[1, 2, 4]));
/// assert_ne!(a, session_key(None, Format::OpenAi, &[1, 5]));
/// assert_ne!(a, session_key(None, Format::Anthropic, &[1, 2, 3]));
/// assert!(session_key(Some("../etc/passwd"), Format::OpenAi, &[]).starts_with("h-"));
/// assert!(!session_key(Some("../etc/passwd"), Format::OpenAi, &[]).contains('/'));
/// ```
pub fn session_key(header: Option<&str>, format: Format, digests: &[u64]) -> String {
    if let Some(name) = header {
        let plain = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if plain {
            return format!("h-{name}");
        }
        let mut h = Fnv::new();
        h.write(name.as_bytes());
        return format!("h-{:016x}", h.0);
    }
    let mut h = Fnv::new();
    h.write(format.as_str().as_bytes());
    for d in digests.iter().take(FINGERPRINT_MESSAGES) {
        h.write(&d.to_le_bytes());
    }
    format!("f-{:016x}", h.0)
}
