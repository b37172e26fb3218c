//! A writer the frozen-writer test (`tests/stores/postgres.rs`) stops with SIGSTOP in
//! the middle of a write: it opens `session` on the PostgreSQL server `config` with a
//! lease of `lease ms` and owner `frozen`, appends `m0`, prints `ready`, waits for a line
//! on stdin, then appends a text holding `slow-me` (which the test makes slow to insert)
//! and prints `acked` or `error <message>`.
//!
//! Usage: `frozen_writer <config> <session> <lease ms>`

use std::io::BufRead;
use std::time::Duration;

use favur_context::store::{NewEntry, PgStore, SessionOptions};
use favur_context::{AsyncStore, Message, Retention};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [config, session, lease] = args.as_slice() else {
        eprintln!("usage: frozen_writer <config> <session> <lease ms>");
        std::process::exit(2);
    };
    let Ok(lease) = lease.parse::<u64>() else {
        eprintln!("frozen_writer: the lease is not a number of milliseconds: {lease}");
        std::process::exit(2);
    };
    favur_context_tests::block_on(async {
        let options = SessionOptions::new()
            .owner("frozen")
            .lease(Duration::from_millis(lease));
        let mut store = PgStore::open_with(config, session, &options)
            .await
            .expect("the session opens");
        let first = NewEntry::appended(Message::user("m0").classify(Retention::Fuzzy));
        store.record(vec![first]).await.expect("m0 is written");
        println!("ready");
        let mut line = String::new();
        let _ = std::io::stdin().lock().read_line(&mut line);
        let slow = NewEntry::appended(Message::user("slow-me").classify(Retention::Fuzzy));
        match store.record(vec![slow]).await {
            Ok(_) => println!("acked"),
            Err(e) => println!("error {e}"),
        }
    });
}
