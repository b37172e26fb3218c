#![deny(warnings)]
// `#[retention]` on functions over any history: a `JournaledHistory` (its `append` returns a
// `Result`), a type alias, `&mut self` of an extension trait and of a wrapper's inherent
// method, a generic `H`, `impl Trait`, a returned borrow, the parameter passed on as it is,
// closures and blocks in the body, wrappers holding a history in a field, and `crate = path`
// for a renamed dependency.
use favur_context::journal::{JournalError, JournaledHistory};
use favur_context::{
    retention, strict, Classify, Entry, EntryId, History, Retention, Store,
};

// A `JournaledHistory`: `append` returns what `JournaledHistory::append` returns.
#[retention(fuzzy)]
fn record_view(journal: &mut JournaledHistory, path: &str) -> Result<EntryId, JournalError> {
    journal.pin("the journal's system prompt")?;
    let id = journal.append(format!("viewed {path}"))?;
    // Passed on as it is.
    helper_journal(journal)?;
    Ok(id)
}

fn helper_journal(journal: &mut JournaledHistory) -> Result<EntryId, JournalError> {
    journal.append(strict!(user: "from a helper"))
}

// A type alias of `History`.
type Hist = History;

#[retention(forgettable)]
fn record_listing(h: &mut Hist, files: &[&str]) {
    h.append(files.join("\n"));
}

// An extension trait, implemented for both histories, whose methods are classified.
trait Record {
    type Out;
    fn note(&mut self, text: &str) -> Self::Out;
}

impl Record for History {
    type Out = EntryId;
    #[retention(strict)]
    fn note(&mut self, text: &str) -> EntryId {
        self.append(text)
    }
}

impl Record for JournaledHistory {
    type Out = Result<EntryId, JournalError>;
    #[retention(strict)]
    fn note(&mut self, text: &str) -> Result<EntryId, JournalError> {
        self.append(text)
    }
}

// A wrapper that derefs to its history: its inherent methods append through `&mut self`.
struct Session {
    history: History,
    turns: u32,
}

impl std::ops::Deref for Session {
    type Target = History;
    fn deref(&self) -> &History {
        &self.history
    }
}

impl std::ops::DerefMut for Session {
    fn deref_mut(&mut self) -> &mut History {
        &mut self.history
    }
}

impl Session {
    #[retention(fuzzy)]
    fn turn(&mut self, text: &str) -> EntryId {
        self.turns += 1;
        let text = format!("turn {}: {text}", self.turns);
        self.append(text)
    }
}

// Wrappers that hold a history: appends on its field, named or positional.
struct Agent {
    journal: JournaledHistory,
    steps: u32,
}

impl Agent {
    #[retention(strict)]
    fn step(&mut self, text: &str) -> Result<EntryId, JournalError> {
        self.steps += 1;
        self.journal.append(text)
    }
}

struct Log(History);

impl Log {
    #[retention(forgettable)]
    fn listing(&mut self, files: &[&str]) -> EntryId {
        self.0.pin("the log's system prompt");
        self.0.append(files.join(" "))
    }
}

// Generic code over the library's store trait, and `impl Trait`.
#[retention(fuzzy)]
fn record_generic<H: Store>(store: &mut H, text: &str) -> Result<EntryId, H::Error> {
    store.append(text)
}

#[retention(fuzzy)]
fn record_classified<H: Store>(store: &mut H, value: impl Classify) -> Result<EntryId, H::Error> {
    store.append(value)
}

#[retention(forgettable)]
fn record_impl(store: &mut impl Store, text: String) -> EntryId {
    store.append(text).expect("recorded")
}

// A borrow returned from the history.
#[retention(strict)]
fn record_and_show(history: &mut History, text: String) -> &Entry {
    let id = history.append(text);
    let entry = history.entries().last().expect("the entry just appended");
    assert_eq!(entry.id(), id);
    entry
}


// Closures and blocks in the body; a macro's own arguments are left alone.
#[retention(forgettable)]
fn record_many(history: &mut History, hits: &[&str]) -> usize {
    let mut add = |hit: &str| {
        history.append(hit);
    };
    for hit in hits {
        add(hit);
    }
    {
        history.append(format!("{} hits", hits.len()));
    }
    history.len()
}

// The dependency under another name.
mod renamed {
    pub use favur_context as fc;
}

#[retention(strict, crate = renamed::fc)]
fn record_renamed(history: &mut History, text: &str) {
    history.append(text);
}

fn temp_journal(name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "favur-ui-any-history-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

fn classes(entries: &[Entry]) -> Vec<(Retention, String)> {
    entries
        .iter()
        .map(|e| (e.retention(), e.message().text()))
        .collect()
}

fn main() -> Result<(), JournalError> {
    use Retention::{Forgettable, Fuzzy, Strict};

    let path = temp_journal("journal");
    let mut journal = JournaledHistory::open(&path)?;
    let id = record_view(&mut journal, "src/lib.rs")?;
    journal.note("an extension-trait note")?;
    record_generic(&mut journal, "through a generic store")?;
    assert_eq!(journal.history().recall(id).ok().map(|e| e.retention()), Some(Fuzzy));
    // The recorded site is the user's `append` line inside the function.
    assert_eq!(journal.history().recall(id).ok().map(|e| e.site().line()), Some(16));
    let got = classes(journal.history().entries());
    drop(journal);
    assert_eq!(
        got,
        [
            (Fuzzy, "the journal's system prompt".to_owned()),
            (Fuzzy, "viewed src/lib.rs".to_owned()),
            (Strict, "from a helper".to_owned()),
            (Strict, "an extension-trait note".to_owned()),
            (Fuzzy, "through a generic store".to_owned()),
        ]
    );
    // What was journaled is read back with its classes.
    let reopened = JournaledHistory::open(&path)?;
    assert_eq!(classes(reopened.history().entries()), got);
    assert_eq!(reopened.history().pinned().len(), 1);
    drop(reopened);
    let _ = std::fs::remove_file(&path);

    let mut history = History::new();
    record_listing(&mut history, &["a.rs", "b.rs"]);
    history.note("noted");
    record_generic(&mut history, "generic").expect("recorded");
    record_impl(&mut history, "impl Trait".to_owned());
    let shown = record_and_show(&mut history, "shown".to_owned());
    assert_eq!(shown.message().text(), "shown");
    assert_eq!(record_many(&mut history, &["x:1", "y:2"]), 8);
    record_renamed(&mut history, "renamed");
    // A value with a class of its own keeps it, as before.
    record_classified(&mut history, strict!(user: "{}", "own class")).expect("recorded");
    assert_eq!(
        classes(history.entries()),
        [
            (Forgettable, "a.rs\nb.rs".to_owned()),
            (Strict, "noted".to_owned()),
            (Fuzzy, "generic".to_owned()),
            (Forgettable, "impl Trait".to_owned()),
            (Strict, "shown".to_owned()),
            (Forgettable, "x:1".to_owned()),
            (Forgettable, "y:2".to_owned()),
            (Forgettable, "2 hits".to_owned()),
            (Strict, "renamed".to_owned()),
            (Strict, "own class".to_owned()),
        ]
    );
    assert_eq!(history.entries()[1].site().line(), 44);

    let mut session = Session {
        history: History::new(),
        turns: 0,
    };
    let id = session.turn("read the lexer");
    session.turn("fix it");
    assert_eq!(session.recall(id).ok().map(|e| e.retention()), Some(Fuzzy));
    assert_eq!(
        classes(session.entries()),
        [
            (Fuzzy, "turn 1: read the lexer".to_owned()),
            (Fuzzy, "turn 2: fix it".to_owned())
        ]
    );

    let path = temp_journal("agent");
    let mut agent = Agent {
        journal: JournaledHistory::open(&path)?,
        steps: 0,
    };
    let id = agent.step("reproduce the failure")?;
    assert_eq!(agent.steps, 1);
    assert_eq!(agent.journal.history().recall(id).ok().map(|e| e.retention()), Some(Strict));
    drop(agent);
    let _ = std::fs::remove_file(&path);

    let mut log = Log(History::new());
    log.listing(&["a.rs", "b.rs"]);
    assert_eq!(
        classes(log.0.entries()),
        [
            (Forgettable, "the log's system prompt".to_owned()),
            (Forgettable, "a.rs b.rs".to_owned())
        ]
    );
    assert_eq!(log.0.pinned().len(), 1);

    Ok(())
}
