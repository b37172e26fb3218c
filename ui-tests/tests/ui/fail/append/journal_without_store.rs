// Writing to a journal without `Store` in scope says which trait to import (it used to be
// E0596, "cannot borrow data in dereference of `JournaledHistory` as mutable").
use favur_context::{journal::JournaledHistory, strict};

fn record(journal: &mut JournaledHistory) {
    let _ = journal.append(strict!(user: "the plan"));
}

fn main() {}
