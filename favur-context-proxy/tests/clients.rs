//! Real clients nobody here wrote, through the proxy: the official `openai` (Chat
//! Completions and Responses), `anthropic` and `google-genai` (Gemini) Python SDKs,
//! streaming and not, and an
//! unmodified mini-swe-agent running a whole recorded task. The test installs them in a
//! venv (`target/proxy-venv`, from PyPI, pinned) the first time, as the PostgreSQL tests
//! install their server. Without Python it fails in CI and says SKIPPED elsewhere.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{
    Direct, Upstream, overhead, request_points, responses_requests, start_proxy, to_anthropic,
    to_chat, to_gemini, trace, traces,
};
use favur_context::import::Format;
use favur_context::render::{GeminiOptions, render_anthropic, render_gemini_with, render_openai};
use favur_context_proxy::config::StoreSpec;
use favur_context_proxy::wire::Wire;
use serde_json::{Value, json};

/// The packages the clients need, pinned (the versions checked here).
const REQUIREMENTS: [&str; 4] = [
    "openai==3.63.0",
    "anthropic==2.17.0",
    "mini-swe-agent==1.15.0",
    "google-genai==3.3.0",
];

/// The venv's python, created and filled on first use (kept between runs under
/// `target/`); `None` (SKIPPED) where there is no Python outside CI.
fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON.get_or_init(make_venv).clone()
}

fn make_venv() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/proxy-venv"));
    let python = dir.join("bin/python");
    let marker = dir.join("favur-requirements.txt");
    let wanted = REQUIREMENTS.join("\n");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m == wanted) && python.exists() {
        return Some(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&dir)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: python3 -m venv failed"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: no python3 with venv for the real-client tests"
        );
        return None;
    }
    let pip = Command::new(&python)
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .args(REQUIREMENTS)
        .status()
        .unwrap();
    assert!(pip.success(), "pip install {REQUIREMENTS:?} failed");
    std::fs::write(&marker, wanted).unwrap();
    Some(python)
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/clients")
        .join(name)
}

/// Runs a client script; returns its stdout lines as JSON.
fn run(python: &Path, args: &[&std::ffi::OsStr]) -> Vec<Value> {
    let out = Command::new(python).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Only the script's own lines: the libraries under it may print too.
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A run for the SDK script: the bodies of every request point of `list`, and what the
/// engine sends for each, run directly.
fn sdk_run(
    api: &str,
    stream: bool,
    bodies: Vec<Value>,
    expected: Vec<Value>,
) -> (Value, Vec<Value>) {
    let session = format!("{api}-{}", if stream { "stream" } else { "plain" });
    (
        json!({"api": api, "stream": stream, "session": session, "bodies": bodies}),
        expected,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_sdks_work_through_the_proxy() {
    let Some(trace) = trace("pydicom__pydicom-1413") else {
        return;
    };
    let Some(python) = python() else { return };
    let mut runs = Vec::new();
    for stream in [false, true] {
        let chat = to_chat(&trace);
        let tools = json!([{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]);
        let (mut d, mut bodies, mut want) = (Direct::new(), Vec::new(), Vec::new());
        for i in request_points(&chat, |m| m["role"] == "assistant") {
            let body = json!({"model": "m", "tools": tools, "messages": &chat[..i]});
            d.step(Format::OpenAi, &body, overhead(&body));
            want.push(json!({"messages": render_openai(&d.history)}));
            bodies.push(body);
        }
        runs.push(sdk_run("chat", stream, bodies, want));

        let (bodies, want, _) = responses_requests(&trace);
        runs.push(sdk_run("responses", stream, bodies, want));

        let (system, turns) = to_anthropic(&trace);
        let (mut d, mut bodies, mut want) = (Direct::new(), Vec::new(), Vec::new());
        for i in request_points(&turns, |m| m["role"] == "assistant") {
            let body = json!({"model": "m", "max_tokens": 1024, "system": system, "messages": &turns[..i]});
            d.step(Format::Anthropic, &body, overhead(&body));
            let r = render_anthropic(&d.history);
            want.push(json!({"messages": r.messages, "system": r.system}));
            bodies.push(body);
        }
        runs.push(sdk_run("anthropic", stream, bodies, want));

        // Gemini 3 (the placeholder signatures on), no tools: the SDK sends the
        // system instruction and contents it is given.
        let (system, contents) = to_gemini(&trace);
        let options = GeminiOptions::for_model("gemini-3-pro-preview");
        let (mut d, mut bodies, mut want) = (Direct::new(), Vec::new(), Vec::new());
        for i in request_points(&contents, |c| c["role"] == "model") {
            let body = json!({"model": "gemini-3-pro-preview",
                "systemInstruction": {"parts": [{"text": system}]}, "contents": &contents[..i]});
            d.step(Format::Gemini, &body, 0);
            let r = render_gemini_with(&d.history, &options);
            want.push(json!({"contents": r["contents"], "systemInstruction": {"parts": r["systemInstruction"]["parts"]}}));
            bodies.push(body);
        }
        assert!(d.compactions >= 2, "Gemini: {} compactions", d.compactions);
        runs.push(sdk_run("gemini", stream, bodies, want));
    }
    let upstream = Upstream::start().await;
    let proxy = start_proxy(&upstream, StoreSpec::Memory).await;
    let plan_file = tempfile::NamedTempFile::new().unwrap();
    let plan = json!({"proxy": proxy, "runs": runs.iter().map(|(r, _)| r).collect::<Vec<_>>()});
    std::fs::write(plan_file.path(), plan.to_string()).unwrap();
    let lines = tokio::task::spawn_blocking(move || {
        run(
            &python,
            &[
                script("sdk_clients.py").as_os_str(),
                plan_file.path().as_os_str(),
            ],
        )
    })
    .await
    .unwrap();

    assert_eq!(upstream.invalid(), Vec::<String>::new());
    let seen = upstream.seen();
    let expected: Vec<&Value> = runs.iter().flat_map(|(_, want)| want).collect();
    assert_eq!((lines.len(), seen.len()), (expected.len(), expected.len()));
    for (n, ((line, s), want)) in lines.iter().zip(&seen).zip(expected).enumerate() {
        assert_eq!(
            line["text"],
            format!("ok {n}"),
            "the SDK read the upstream's reply ({line})"
        );
        if let Some(raw) = line.get("raw") {
            assert_eq!(
                raw.as_str().unwrap().as_bytes(),
                &s.answer[..],
                "request {n}: answer not byte for byte"
            );
        }
        let got: Value = serde_json::from_slice(&s.body).unwrap();
        for (key, value) in want.as_object().unwrap() {
            let d = common::first_difference(&got[key], value);
            assert!(
                d.is_none(),
                "request {n} ({}): `{key}` differs from the engine's at {}",
                line["session"],
                d.unwrap_or_default()
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unmodified_mini_swe_agent_completes_a_recorded_task() {
    let Some(trace) = trace("django__django-14725") else {
        return;
    };
    let Some(python) = python() else { return };
    let upstream = Upstream::start().await;
    let replies: Vec<String> = trace
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect();
    upstream.log.lock().unwrap().script = replies.clone();
    let dir = tempfile::tempdir().unwrap();
    let store = StoreSpec::Journal(dir.path().join("sessions"));
    std::fs::create_dir_all(dir.path().join("sessions")).unwrap();
    let proxy = start_proxy(&upstream, store).await;
    let trace_file = traces::trace_files(&traces::traces_dir().unwrap())
        .into_iter()
        .find(|p| p.ends_with("django__django-14725.json"))
        .unwrap();
    let messages_file = dir.path().join("agent-messages.json");
    let args = [
        script("mini_swe.py").into_os_string(),
        proxy.clone().into(),
        trace_file.into(),
        messages_file.clone().into(),
    ];
    let lines = tokio::task::spawn_blocking(move || {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        run(&python, &args)
    })
    .await
    .unwrap();
    assert_eq!(
        lines.last().unwrap()["exit_status"],
        "Submitted",
        "{lines:?}"
    );
    assert_eq!(upstream.invalid(), Vec::<String>::new());
    let seen = upstream.seen();
    assert_eq!(seen.len(), replies.len(), "one request per recorded step");

    // What the agent held, request by request, against what the upstream got.
    let agent: Value =
        serde_json::from_str(&std::fs::read_to_string(&messages_file).unwrap()).unwrap();
    let agent = agent.as_array().unwrap();
    let task = agent[1]["content"].as_str().unwrap();
    let points = request_points(agent, |m| m["role"] == "assistant");
    assert_eq!(points.len(), seen.len());
    let mut direct = Direct::new();
    let mut smaller = 0;
    for (n, (&i, s)) in points.iter().zip(&seen).enumerate() {
        let body = json!({"model": "recorded", "messages": agent[..i].iter().map(|m| json!({"role": m["role"], "content": m["content"]})).collect::<Vec<_>>()});
        direct.step(Wire::Chat.format(&body), &body, 0);
        let got: Value = serde_json::from_slice(&s.body).unwrap();
        let d = common::first_difference(&got["messages"], &render_openai(&direct.history));
        assert!(
            d.is_none(),
            "request {n} differs from the engine's at {}",
            d.unwrap_or_default()
        );
        assert_eq!(
            got["messages"][1]["content"], task,
            "request {n}: the task is pinned in place"
        );
        smaller += usize::from(s.body.len() < body.to_string().len());
    }
    assert!(
        direct.compactions >= 3 && smaller > seen.len() / 2,
        "compactions {}, smaller {smaller}",
        direct.compactions
    );
}
