//! The `bpe-openai` counter gives tiktoken's counts: on every text of the shared traces
//! (messages, tool outputs, call arguments) and on texts made to split differently, for
//! both encodings; and a history counted with it reopens with it.
//! `cargo test -p favur-context-tests --features tiktoken,bpe-openai --test bpe_tokens`.
#![cfg(all(feature = "tiktoken", feature = "bpe-openai"))]

mod common;

use common::{trace_files, traces_dir};
use favur_context::tokens::{BpeCounter, Encoding, TiktokenCounter, TokenCounter};
use favur_context::{History, fuzzy};
use serde_json::Value;

/// Every string of a JSON document longer than a few bytes, in document order.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.len() > 3 => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

fn same_counts(texts: &[String], what: &str) {
    for encoding in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let (bpe, tiktoken) = (BpeCounter::new(encoding), TiktokenCounter::new(encoding));
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(
                bpe.count_text(text),
                tiktoken.count_text(text),
                "{what} {i} ({} bytes) in {}: {:?}",
                text.len(),
                encoding.name(),
                text.get(..text.len().min(200)),
            );
        }
    }
}

#[test]
fn counts_are_tiktokens_on_the_traces() {
    let Some(dir) = traces_dir() else { return };
    let files = trace_files(&dir);
    assert!(!files.is_empty(), "no traces in {}", dir.display());
    let mut texts = Vec::new();
    for path in &files {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("readable trace"))
                .expect("trace is JSON");
        strings(&doc, &mut texts);
    }
    // Every third text (1.1 of the 4.2 MB): the unoptimized test build counts
    // about 1 MB a second with each counter.
    let sample: Vec<String> = texts
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0)
        .map(|(_, t)| t.clone())
        .collect();
    let bytes: usize = sample.iter().map(String::len).sum();
    assert!(bytes > 1_000_000, "only {bytes} bytes of trace text");
    same_counts(&sample, "trace text");
}

#[test]
fn counts_are_tiktokens_where_texts_split_oddly() {
    let texts: Vec<String> = [
        "",
        " ",
        "\n\n\n",
        "   \t  \n  x",
        "trailing spaces   ",
        "<|endoftext|> and <|im_start|>system",
        "don't won't it's I'M YOU'LL",
        "12345678901234567890 3.14159 0x7fff_ffff",
        "émigré naïve façade 日本語のテキスト 한국어 😀👍🏽 e\u{301}",
        "CamelCaseWordsAndALLCAPS snake_case_words kebab-case-words",
        "https://example.com/a/b?c=d&e=f#g",
        "{\"command\": \"ls -la /tmp\", \"nested\": {\"a\": [1, 2, 3]}}",
        "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\nValueError: bad",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([
        "a".repeat(5_000),
        " ".repeat(3_000) + "x",
        "ab\n".repeat(2_000),
        "🙂".repeat(700),
    ])
    .collect();
    same_counts(&texts, "text");
}

#[test]
fn a_history_reopens_with_the_bpe_counter() {
    let mut h = History::with_counter(BpeCounter::o200k());
    h.append(fuzzy!(user: "tiktoken is great!"));
    // Tiktoken's counter has another id: named explicitly, it is refused.
    common::reopens_with_its_counter(
        &h,
        "bpe-openai/o200k_base",
        TiktokenCounter::o200k(),
        "tiktoken/o200k_base",
    );
}
