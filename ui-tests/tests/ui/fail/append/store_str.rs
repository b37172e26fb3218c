// Every store keeps the guarantee: `Store::append` and `NewEntry` take only classified values.
use favur_context::{journal::JournaledHistory, store::NewEntry, Store};

fn record(journal: &mut JournaledHistory) {
    let _ = journal.append("some text");
    let _ = journal.record(vec![NewEntry::pinned(String::from("a system prompt"))]);
}

fn main() {}
