//! A journal's path is handled safely: no symbolic link is followed unless asked for, only
//! regular files are opened, a file that is not a journal is never written, a journal
//! deleted, replaced or truncated under its writer refuses appends, and a complete last
//! record that only lacks its newline is kept.

use std::path::Path;

use favur_context::journal::{Corruption, JournalError, OpenOptions};
use favur_context::{Store, fuzzy};

/// A journal of `n` appends in a new directory: the directory, its path, its bytes.
fn written(n: usize) -> (tempfile::TempDir, std::path::PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    journal_with(&path, n);
    let bytes = std::fs::read(&path).unwrap();
    (dir, path, bytes)
}

fn journal_with(path: &Path, n: usize) {
    let mut h = OpenOptions::new().open(path).unwrap();
    for i in 0..n {
        h.append(fuzzy!(user: "message {i}")).unwrap();
    }
}

#[cfg(unix)]
#[test]
fn a_symlink_is_not_followed_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere.jsonl");
    let link = dir.path().join("journal.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    // Dangling: nothing is created elsewhere.
    let err = OpenOptions::new().open(&link).unwrap_err();
    assert!(matches!(err, JournalError::Symlink { .. }), "{err:?}");
    assert!(err.to_string().contains("journal.jsonl"));
    assert!(!target.exists());
    // To an existing journal: refused too, and the journal is left as it was.
    journal_with(&target, 2);
    let before = std::fs::read(&target).unwrap();
    assert!(matches!(
        OpenOptions::new().salvage(true).open(&link),
        Err(JournalError::Symlink { .. })
    ));
    assert_eq!(std::fs::read(&target).unwrap(), before);
    // Asked for: followed.
    let h = OpenOptions::new()
        .follow_symlinks(true)
        .open(&link)
        .unwrap();
    assert_eq!(h.history().len(), 2);
}

#[cfg(unix)]
#[test]
fn only_a_regular_file_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    for special in ["/dev/zero", "/dev/null"] {
        let err = OpenOptions::new().salvage(true).open(special).unwrap_err();
        assert!(matches!(err, JournalError::NotAFile { .. }), "{err:?}");
        let link = dir.path().join(format!("to-{}", &special[5..]));
        std::os::unix::fs::symlink(special, &link).unwrap();
        let err = OpenOptions::new()
            .salvage(true)
            .follow_symlinks(true)
            .open(&link)
            .unwrap_err();
        assert!(matches!(err, JournalError::NotAFile { .. }), "{err:?}");
    }
    let err = OpenOptions::new().open(dir.path()).unwrap_err();
    assert!(matches!(err, JournalError::NotAFile { .. }), "{err:?}");
    let fifo = dir.path().join("fifo");
    // Not `mkfifo` as a child process: it would inherit other tests' journal locks.
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a file.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let err = OpenOptions::new().salvage(true).open(&fifo).unwrap_err();
    assert!(matches!(err, JournalError::NotAFile { .. }), "{err:?}");
}

#[test]
fn a_file_that_is_not_a_journal_is_left_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [&[u8]; 7] = [
        br#"{"model":"gpt","temperature":0.2}"#, // a JSON config without newline
        b"{\"model\":\"gpt\"}\n{\"x\":1}\n",     // with newlines
        b"not json at all",
        b"{\"journey\":1}", // not the start of a header
        b"{",               // one byte: a prefix of a header, but may be anyone's
        b"{\"jour",         // shorter than `{"journal":`
        b"{\"journal\"",    // one byte short of it
    ];
    for (n, content) in cases.iter().enumerate() {
        let path = dir.path().join(format!("config-{n}.json"));
        std::fs::write(&path, content).unwrap();
        let err = OpenOptions::new().open(&path).unwrap_err();
        assert!(
            matches!(
                err,
                JournalError::Corrupt {
                    line: 1,
                    offset: 0,
                    problem: Corruption::MissingHeader,
                    ..
                }
            ),
            "{n}: {err:?}"
        );
        let err = OpenOptions::new().salvage(true).open(&path).unwrap_err();
        assert!(
            matches!(err, JournalError::NotAJournal { .. }),
            "{n}: {err:?}"
        );
        assert_eq!(
            &std::fs::read(&path).unwrap(),
            content,
            "case {n} was changed"
        );
        let siblings = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(siblings, n + 1, "no salvage file was made");
    }
    // A torn header (a journal whose creation was cut) is still a new journal.
    let path = dir.path().join("torn-header.jsonl");
    std::fs::write(&path, b"{\"journal\":{\"form").unwrap();
    let h = OpenOptions::new().open(&path).unwrap();
    assert!(h.report().created && h.report().torn_tail.is_some());
}

#[test]
fn a_complete_last_record_without_its_newline_is_kept() {
    let (dir, path, full) = written(3);
    std::fs::write(&path, &full[..full.len() - 1]).unwrap();
    let mut h = OpenOptions::new().open(&path).unwrap();
    assert_eq!(h.history().len(), 3);
    assert!(h.report().is_clean(), "{:?}", h.report());
    assert_eq!(
        h.history()
            .recall(favur_context::EntryId(2))
            .unwrap()
            .message()
            .text(),
        "message 2"
    );
    h.append(fuzzy!(user: "after")).unwrap();
    drop(h);
    let h = OpenOptions::new().open(&path).unwrap();
    assert_eq!(h.history().len(), 4);
    assert!(h.report().is_clean());
    drop(h);
    // A header alone without its newline, too.
    let header_only = dir.path().join("h.jsonl");
    journal_with(&header_only, 0);
    let text = std::fs::read(&header_only).unwrap();
    std::fs::write(&header_only, &text[..text.len() - 1]).unwrap();
    let h = OpenOptions::new().open(&header_only).unwrap();
    assert!(h.report().is_clean());
    drop(h);
    assert_eq!(std::fs::read(&header_only).unwrap(), text);
    // A truly torn record is still cut.
    let full = std::fs::read(&path).unwrap();
    std::fs::write(&path, &full[..full.len() - 5]).unwrap();
    let h = OpenOptions::new().open(&path).unwrap();
    assert_eq!(h.history().len(), 3);
    assert!(h.report().torn_tail.is_some());
}

/// Opens a journal, appends, lets `act` do something to its path, and checks that the
/// next append is refused naming `change`, and every later one too.
fn refuses_after(change: &str, act: impl FnOnce(&Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.jsonl");
    let mut h = OpenOptions::new().open(&path).unwrap();
    h.append(fuzzy!(user: "kept")).unwrap();
    act(&path);
    let err = h.append(fuzzy!(user: "lost?")).unwrap_err();
    match &err {
        JournalError::Changed { change: c, .. } => assert_eq!(*c, change),
        other => panic!("{other:?}"),
    }
    assert!(h.is_poisoned());
    assert!(h.append(fuzzy!(user: "again")).is_err());
    dir
}

#[test]
fn a_journal_deleted_under_its_writer_refuses_appends() {
    let dir = refuses_after("deleted", |p| std::fs::remove_file(p).unwrap());
    // A second writer opens a new journal there; nothing it did not see was acknowledged.
    let second = OpenOptions::new().open(dir.path().join("j.jsonl")).unwrap();
    assert!(second.history().is_empty());
}

#[test]
fn a_journal_replaced_under_its_writer_refuses_appends() {
    refuses_after("replaced by another file", |p| {
        let other = p.with_extension("other");
        std::fs::copy(p, &other).unwrap();
        std::fs::rename(&other, p).unwrap();
    });
}

#[test]
fn a_journal_truncated_under_its_writer_refuses_appends() {
    refuses_after("truncated or written by another process", |p| {
        let len = std::fs::metadata(p).unwrap().len();
        let f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
        f.set_len(len / 2).unwrap();
    });
}

#[test]
fn salvage_moves_exactly_the_damaged_end_aside() {
    let (_dir, path, good) = written(2);
    let damaged = b"{\"entry\":garbage}\n{\"more\":1}\n";
    let mut all = good.clone();
    all.extend_from_slice(damaged);
    std::fs::write(&path, &all).unwrap();
    let h = OpenOptions::new().salvage(true).open(&path).unwrap();
    let salvaged = h.report().salvaged.clone().unwrap();
    assert_eq!(salvaged.bytes, damaged.len() as u64);
    let moved = std::fs::read(salvaged.moved_to.unwrap()).unwrap();
    assert_eq!(moved, damaged);
    drop(h);
    assert_eq!(std::fs::read(&path).unwrap(), good);
}
