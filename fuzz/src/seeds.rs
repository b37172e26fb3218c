//! What the driver starts from: inputs built in, and the repository's own fixtures.

use std::path::Path;
use std::sync::OnceLock;

use favur_context::import::rules::Rules;
use favur_context::{History, Message, Retention, ToolCall};

/// The shipped rules: they classify every role of every format.
pub(crate) fn every_role() -> &'static Rules {
    static RULES: OnceLock<Rules> = OnceLock::new();
    RULES.get_or_init(|| {
        Rules::from_toml(include_str!("../../rules/coding-agent-shell.toml"))
            .expect("the shipped rules load")
    })
}

/// Inputs the model target once failed on, kept as seeds (and replayed by a test): a
/// history whose JSON form, reloaded, counted the notes for unanswered calls otherwise
/// than the history did (repeated call ids, results recorded after their calls were
/// settled, text-only messages settling them).
///
/// ```
/// for input in favur_context_fuzz::MODEL_REGRESSIONS {
///     favur_context_fuzz::model(input);
/// }
/// ```
pub const MODEL_REGRESSIONS: [&[u8]; 2] = [
    include_bytes!("../regressions/model-json-repairs-1.bin"),
    include_bytes!("../regressions/model-json-repairs-2.bin"),
];

/// A small OpenAI transcript with a call and its result.
pub(crate) const SAMPLE_OPENAI: &str = r#"[
{"role":"system","content":"You are a coding agent."},
{"role":"user","content":"Fix the failing test."},
{"role":"assistant","content":"Looking.","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},
{"role":"tool","tool_call_id":"c1","content":"src\ntests"},
{"role":"assistant","content":"Done."}
]"#;

const SAMPLE_ANTHROPIC: &str = r#"{"system":"You are a coding agent.","messages":[
{"role":"user","content":"Fix the failing test."},
{"role":"assistant","content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"t1","name":"bash","input":{"command":"ls"}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"src\ntests","is_error":false}]},
{"role":"assistant","content":"Done."}]}"#;

const SAMPLE_GEMINI: &str = r#"{"systemInstruction":{"parts":[{"text":"You are a coding agent."}]},"contents":[
{"role":"user","parts":[{"text":"Fix the failing test."},{"inlineData":{"mimeType":"image/png","data":"iVBORw0KGgo="}}]},
{"role":"model","parts":[{"text":"Looking.","thought":true,"thoughtSignature":"c2ln"},{"functionCall":{"name":"bash","args":{"command":"ls"}},"thoughtSignature":"c2lnMg=="},{"functionCall":{"id":"c2","name":"cat","args":{}}}]},
{"role":"user","parts":[{"functionResponse":{"name":"bash","response":{"output":"src\ntests"}}},{"functionResponse":{"id":"c2","name":"cat","response":{"error":"no"}}}]},
{"role":"model","parts":[{"text":"Done."},{"text":"","thoughtSignature":"c2lnMw=="}]}]}"#;

const SAMPLE_MCP: &str = r#"{"content":[{"type":"text","text":"3 files"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},
{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},{"type":"resource_link","uri":"file:///a.rs","name":"a.rs","mimeType":"text/x-rust"},
{"type":"resource","resource":{"uri":"file:///b.txt","text":"hello"}},{"type":"resource","resource":{"uri":"file:///c.bin","blob":"AAAA"}}],
"structuredContent":{"count":3},"isError":false}"#;
const SAMPLE_RESPONSES: &str = r#"{"instructions":"You are a coding agent.","input":[
{"role":"user","content":[{"type":"input_text","text":"Fix it."},{"type":"input_image","image_url":"data:image/png;base64,iVBORw0KGgo=","detail":"auto"}]},
{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"look"}],"encrypted_content":"ENC"},
{"type":"function_call","id":"fc_1","call_id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"},
{"type":"function_call_output","call_id":"c1","output":"src"}]}"#;

const SAMPLE_MINI_SWE: &str = r#"{"messages":[
{"role":"system","content":"You are a coding agent."},
{"role":"user","content":"Fix the failing test."},
{"role":"assistant","content":"THOUGHT: look\n```bash\nls -la\n```"},
{"role":"user","content":"<returncode>0</returncode>\n<output>\nsrc\n</output>"},
{"role":"assistant","content":"```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"}]}"#;

const SAMPLE_POLICY: &str = r#"window_tokens = 8000
limit = 0.6
keep_recent = 1
entry_cap_tokens = 200

[[tiers]]
at = 0.1
forgettable = "summarize"
fuzzy = "keep"
strict = "keep"

[[tiers]]
at = 0.3
forgettable = "drop"
fuzzy = "summarize"
strict = "summarize"
"#;

/// A history with every kind of entry, for the policy target to compact.
pub(crate) fn sample_history() -> History {
    let mut h = History::new();
    h.pin(Message::system("You are a coding agent.").classify(Retention::Strict));
    h.append(Message::user("Fix the failing test.").classify(Retention::Strict));
    for i in 0..12 {
        let id = format!("c{i}");
        h.append(
            Message::assistant_calls(vec![ToolCall::new(
                id.clone(),
                "bash",
                serde_json::json!({"command": format!("cat src/f{i}.rs")}),
            )])
            .classify(Retention::Fuzzy),
        );
        let body = format!("fn f{i}() {{}}\n").repeat(40 + i * 7);
        let class = [Retention::Forgettable, Retention::Fuzzy, Retention::Strict][i % 3];
        h.append(Message::tool_result(id, body, i % 5 == 0).classify(class));
        h.append(Message::assistant(format!("Read file {i}.")).classify(Retention::Fuzzy));
    }
    h
}

/// A journal with every record type, written by the model target's own steps.
fn sample_journal() -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("favur-fuzz-seed-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join("seed.jsonl");
    let _ = std::fs::remove_file(&path);
    {
        let mut j = favur_context::journal::OpenOptions::new()
            .open(&path)
            .expect("a journal in the temporary directory");
        let h = sample_history();
        for e in h.entries() {
            let new = if e.kind() == &favur_context::message::EntryKind::Pinned {
                favur_context::store::NewEntry::pinned(e.message().clone().classify(e.retention()))
            } else {
                favur_context::store::NewEntry::appended(
                    e.message().clone().classify(e.retention()),
                )
            };
            favur_context::Store::record(&mut j, vec![new]).expect("appends");
        }
        let policy = Policy::from_toml_str(SAMPLE_POLICY).expect("the sample policy");
        favur_context::Compactor::new(policy)
            .compact_at(&mut j, const { std::num::NonZeroU8::new(2).unwrap() })
            .expect("compacts");
    }
    let bytes = std::fs::read(&path).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}

use favur_context::Policy;

/// Files of the repository under `root` whose names end in one of `exts`, below `dirs`.
fn files(root: &Path, dirs: &[&str], exts: &[&str]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(list) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = list.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let name = p.to_string_lossy();
            if exts.iter().any(|x| name.ends_with(x))
                && let Ok(bytes) = std::fs::read(&p)
            {
                // A snapshot: the JSON after its header.
                let bytes = match bytes
                    .windows(5)
                    .position(|w| w == b"---\n[" || w == b"---\n{")
                {
                    Some(at) if name.ends_with(".snap") => bytes[at + 4..].to_vec(),
                    _ => bytes,
                };
                out.push(bytes);
            }
        }
    }
    out
}

/// The seed corpus of `target`: built-in inputs, and the repository's fixtures found
/// under `root` (the workspace root).
///
/// ```
/// let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
/// assert!(favur_context_fuzz::seeds("rules", &root).len() >= 2);
/// ```
pub fn seeds(target: &str, root: &Path) -> Vec<Vec<u8>> {
    let snapshots = ["tests/tests/snapshots"];
    let fixtures = ["tests/tests/fixtures"];
    let mut out: Vec<Vec<u8>> = match target {
        "journal" => {
            let mut v = vec![sample_journal()];
            v.extend(files(root, &fixtures, &[".jsonl"]));
            v
        }
        "openai" => {
            let mut v = vec![SAMPLE_OPENAI.as_bytes().to_vec()];
            v.extend(files(root, &fixtures, &["openai.json"]));
            v.extend(files(root, &snapshots, &["openai.snap"]));
            v
        }
        "anthropic" => {
            let mut v = vec![SAMPLE_ANTHROPIC.as_bytes().to_vec()];
            v.extend(files(root, &snapshots, &["anthropic.snap"]));
            v
        }
        "mini_swe" => vec![SAMPLE_MINI_SWE.as_bytes().to_vec()],
        "gemini" => vec![SAMPLE_GEMINI.as_bytes().to_vec()],
        "mcp" => vec![SAMPLE_MCP.as_bytes().to_vec()],
        "responses" => vec![SAMPLE_RESPONSES.as_bytes().to_vec()],
        // Programs: every step once, then calls, results, compactions and reopens.
        "model" => {
            let mut v = vec![
                (0..=255u8).collect(),
                [2u8, 9, 1, 3, 7, 40, 3, 1, 7, 40, 5, 20, 0, 2, 6, 7, 8].repeat(6),
                [4u8, 0, 5, 1, 50, 1, 2, 6, 9, 0, 80, 5, 10, 1, 1].repeat(5),
            ];
            v.extend(MODEL_REGRESSIONS.iter().map(|r| r.to_vec()));
            v
        }
        "policy" => vec![
            SAMPLE_POLICY.as_bytes().to_vec(),
            b"window_tokens = 1000\n".to_vec(),
        ],
        "rules" => {
            let mut v = vec![b"[[rule]]\nname = \"all\"\nclass = \"fuzzy\"\n".to_vec()];
            v.extend(files(root, &["rules"], &[".toml"]));
            // Commands whose file and part a `key = "path"` rule reads.
            v.extend(
                [
                    "cd /r && nl -ba src/a.py | sed -n '580,620p'",
                    "sed -n 42p a.py | head -3",
                    "cat -n 'a|b.py' | head --lines=7 && tail x",
                    "head -n -5 a.py | sed -n '2,1p'",
                ]
                .map(|c| c.as_bytes().to_vec()),
            );
            v
        }
        "validate" => {
            let mut v = vec![
                SAMPLE_OPENAI.as_bytes().to_vec(),
                SAMPLE_ANTHROPIC.as_bytes().to_vec(),
                SAMPLE_GEMINI.as_bytes().to_vec(),
            ];
            v.extend(files(root, &fixtures, &[".json"]));
            v.extend(files(root, &snapshots, &[".snap"]));
            v
        }
        _ => Vec::new(),
    };
    if out.is_empty() {
        out.push(Vec::new());
    }
    out
}
