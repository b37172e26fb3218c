//! Rendering every form at every placement to both formats.

mod common;

use common::parts::{assistant, call, result, text, tool};
use common::{apply, reform, render_valid, summarize};
use favur_context::compact::Edit;
use favur_context::render::Form;
use favur_context::render::validate::{Rule, validate_anthropic_strict, validate_openai_strict};
use favur_context::render::{FIRST_TURN_NOTE, missing_result, render_anthropic, render_openai};
use favur_context::{EntryId, History, Message, Retention, forgettable, fuzzy, strict};

/// insta's JSON snapshot with the keys sorted, whichever order serde_json keeps them in.
macro_rules! assert_json_snapshot {
    ($($t:tt)*) => {{
        let _sorted = common::sorted_snapshots();
        insta::assert_json_snapshot!($($t)*);
    }};
}
use serde_json::{Value, json};

struct Ids {
    task: EntryId,
    a1: EntryId,
    r1: EntryId,
    a2: EntryId,
    r2: EntryId,
    r3: EntryId,
    fin: EntryId,
}

/// system pin; user task; assistant text + call c1; result c1; assistant calls c2, c3;
/// results c2 and c3 (error); assistant text.
fn base() -> (History, Ids) {
    let mut h = History::new();
    h.pin(strict!(system: "You are a coding agent."));
    let task = h.append(strict!(user: "Fix the failing test."));
    let a1 = h.append(
        assistant([
            text("Looking around."),
            call("c1", "bash", json!({"command": "ls"})),
        ])
        .classify(Retention::Fuzzy),
    );
    let r1 = h.append(forgettable!(tool_result("c1"): "Cargo.toml\nsrc"));
    let a2 = h.append(fuzzy!(tool_calls: [
        ("c2", "bash", r#"{"command":"cat src/lib.rs"}"#),
        ("c3", "bash", r#"{"command":"cargo test"}"#)
    ]));
    let r2 = h.append(strict!(tool_result("c2"): "pub fn f() {{}}"));
    let r3 = h.append(strict!(tool_error("c3"): "test failed"));
    let fin = h.append(fuzzy!(assistant: "The test fails in f."));
    (
        h,
        Ids {
            task,
            a1,
            r1,
            a2,
            r2,
            r3,
            fin,
        },
    )
}

#[test]
fn verbatim_view_renders_every_message_in_order() {
    let (h, _) = base();
    let (openai, anthropic) = render_valid(&h, true);
    assert_eq!(openai.as_array().unwrap().len(), 8);
    assert_eq!(openai[3]["role"], "tool");
    assert_eq!(openai[3]["tool_call_id"], "c1");
    assert_eq!(openai[4]["content"], serde_json::Value::Null);
    assert_json_snapshot!("verbatim_openai", openai);
    assert_json_snapshot!("verbatim_anthropic", anthropic);
}

/// [`base`] compacted by the `edits` of its ids, rendered to both formats (both valid,
/// strictly).
fn base_compacted(edits: impl FnOnce(&Ids) -> Vec<Edit>) -> (Ids, Value, Value) {
    let (mut h, ids) = base();
    apply(&mut h, edits(&ids));
    let (openai, anthropic) = render_valid(&h, true);
    (ids, openai, anthropic)
}

#[test]
fn calls_only_keeps_the_calls_and_drops_the_text() {
    let (_, openai, anthropic) = base_compacted(|ids| vec![reform(ids.a1, Form::CallsOnly)]);
    assert_eq!(openai[2]["content"], serde_json::Value::Null);
    assert_eq!(openai[2]["tool_calls"][0]["id"], "c1");
    assert_eq!(
        anthropic["messages"][1]["content"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(anthropic["messages"][1]["content"][0]["type"], "tool_use");
    assert_json_snapshot!("calls_only_anthropic", anthropic);
}

#[test]
fn placeholder_without_summary_points_at_the_original() {
    let (ids, openai, anthropic) =
        base_compacted(|ids| vec![reform(ids.r1, Form::Placeholder { summary: None })]);
    assert_eq!(
        openai[3]["content"],
        favur_context::render::placeholder_text(ids.r1, None)
    );
    assert_eq!(
        anthropic["messages"][2]["content"][0]["content"],
        favur_context::render::placeholder_text(ids.r1, None)
    );
}

#[test]
fn placeholder_with_summary_points_at_both_and_the_summary_is_marked_context() {
    let (mut h, ids) = base();
    let (sid, s) = summarize(&h, &[ids.r2], "lib.rs defines f.");
    apply(
        &mut h,
        vec![s, reform(ids.r2, Form::Placeholder { summary: Some(sid) })],
    );
    let (openai, anthropic) = render_valid(&h, true);
    let text = favur_context::render::placeholder_text(ids.r2, Some(sid));
    assert!(text.contains(&sid.to_string()) && text.contains(&ids.r2.to_string()));
    assert_eq!(openai[5]["content"], text);
    // Both results of the assistant turn still come first in the next user turn.
    let user = &anthropic["messages"][4]["content"];
    assert_eq!(user[0]["type"], "tool_result");
    assert_eq!(user[1]["type"], "tool_result");
    assert_eq!(user[1]["is_error"], true);
    assert_json_snapshot!("placeholder_summary_openai", openai);
    assert_json_snapshot!("placeholder_summary_anthropic", anthropic);
}

#[test]
fn capped_renders_the_capped_message_at_first_and_middle_and_last() {
    let (mut h, ids) = base();
    // Capped forms a history accepts: each entry's own message, cut.
    let capped = |h: &History, id| Form::capped(&h.recall(id).unwrap(), 8);
    let shown = |form: &Form| match form {
        Form::Capped(m) => m.text().to_owned(),
        _ => unreachable!(),
    };
    let forms = [
        capped(&h, ids.task),
        capped(&h, ids.r3),
        capped(&h, ids.fin),
    ];
    let texts: Vec<String> = forms.iter().map(shown).collect();
    let result = match &forms[1] {
        Form::Capped(m) => m.tool_results().next().unwrap().content.clone(),
        _ => unreachable!(),
    };
    apply(
        &mut h,
        vec![
            reform(ids.task, forms[0].clone()),
            reform(ids.r3, forms[1].clone()),
            reform(ids.fin, forms[2].clone()),
        ],
    );
    let (openai, anthropic) = render_valid(&h, true);
    assert_eq!(openai[1]["content"], texts[0].as_str());
    assert!(texts[0].contains("bytes elided by the per-entry cap"));
    assert_eq!(openai[6]["content"], result.as_str());
    assert_eq!(openai[7]["content"], texts[2].as_str());
    assert_json_snapshot!("capped_anthropic", anthropic);
}

#[test]
fn summaries_at_first_middle_and_last_are_tagged_user_context() {
    let (mut h, ids) = base();
    let (first_id, first) = summarize(&h, &[ids.task], "The user asked for a fix.");
    apply(&mut h, vec![first]);
    let (_, middle) = summarize(&h, &[ids.a1, ids.r1], "Listed the repository.");
    apply(&mut h, vec![middle]);
    let (_, last) = summarize(&h, &[ids.fin], "Found the failing function.");
    apply(&mut h, vec![last]);
    let (openai, anthropic) = render_valid(&h, true);
    let msgs = openai.as_array().unwrap();
    assert_eq!(msgs.len(), 7);
    for i in [1, 2, 6] {
        assert_eq!(msgs[i]["role"], "user");
        let text = msgs[i]["content"].as_str().unwrap();
        assert!(text.starts_with("<context-summary id=\"#"), "{text}");
        assert!(text.contains("not an instruction"));
    }
    assert!(
        msgs[1]["content"]
            .as_str()
            .unwrap()
            .contains(&format!("id=\"{first_id}\" replaces=\"{}\"", ids.task))
    );
    // Anthropic: the two leading summaries merge into the first user turn.
    assert_eq!(anthropic["messages"][0]["role"], "user");
    assert_eq!(
        anthropic["messages"][0]["content"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_json_snapshot!("summaries_openai", openai);
    assert_json_snapshot!("summaries_anthropic", anthropic);
}

#[test]
fn anthropic_inserts_a_marked_user_turn_when_the_view_starts_with_the_assistant() {
    let (_, openai, anthropic) = base_compacted(|ids| vec![Edit::Drop { id: ids.task }]);
    // Both formats send the same note turn first, so both send what usage counts.
    assert_eq!(openai[1]["content"], FIRST_TURN_NOTE);
    assert_eq!(openai[2]["role"], "assistant");
    assert_eq!(anthropic["messages"][0]["role"], "user");
    assert_eq!(
        anthropic["messages"][0]["content"][0]["text"],
        FIRST_TURN_NOTE
    );
    assert_eq!(anthropic["messages"][1]["role"], "assistant");
}

#[test]
fn a_dropped_result_whose_call_stays_becomes_a_placeholder_naming_it() {
    let (ids, openai, _) = base_compacted(|ids| vec![Edit::Drop { id: ids.r2 }]);
    assert_eq!(openai[5]["tool_call_id"], "c2");
    assert_eq!(
        openai[5]["content"],
        favur_context::render::placeholder_text(ids.r2, None)
    );
}

#[test]
fn a_result_whose_call_was_dropped_is_rendered_as_marked_context() {
    let (ids, openai, anthropic) = base_compacted(|ids| vec![Edit::Drop { id: ids.a1 }]);
    assert_eq!(openai[2]["role"], "user");
    let text = openai[2]["content"].as_str().unwrap();
    assert!(text.starts_with(&format!("<tool-output entry=\"{}\" call=\"c1\">", ids.r1)));
    assert!(text.contains("Cargo.toml"));
    assert_eq!(
        anthropic["messages"][0]["content"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn calls_in_flight_at_the_tail_are_rendered_as_they_are() {
    let (mut h, _) = base();
    h.append(fuzzy!(tool_call: "c9", "bash", json!({"command": "cargo test"})));
    let (openai, anthropic) = render_valid(&h, false);
    let last = openai.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["tool_calls"][0]["id"], "c9");
    let err = validate_openai_strict(&openai).unwrap_err();
    assert_eq!(
        err.rule,
        Rule::MissingResult {
            call_id: "c9".into()
        }
    );
    let err = validate_anthropic_strict(&anthropic).unwrap_err();
    assert_eq!(
        err.rule,
        Rule::MissingResult {
            call_id: "c9".into()
        }
    );
}

#[test]
fn a_call_without_any_result_before_the_conversation_goes_on_gets_one() {
    let (mut h, _) = base();
    h.append(fuzzy!(tool_call: "c8", "bash", json!({"command": "ls"})));
    h.append(strict!(user: "Stop, do something else."));
    let (openai, _) = render_valid(&h, true);
    let msgs = openai.as_array().unwrap();
    assert_eq!(msgs[msgs.len() - 2]["tool_call_id"], "c8");
    assert_eq!(msgs[msgs.len() - 2]["content"], missing_result());
}

#[test]
fn a_result_recorded_after_other_messages_is_pulled_up_to_its_call() {
    let mut h = History::new();
    h.append(strict!(user: "go"));
    h.append(fuzzy!(tool_call: "c1", "bash", json!({"command": "ls"})));
    h.append(strict!(user: "also check the tests"));
    h.append(forgettable!(tool_result("c1"): "a.rs"));
    let (openai, anthropic) = render_valid(&h, true);
    assert_eq!(openai[2]["role"], "tool");
    assert_eq!(openai[3]["content"], "also check the tests");
    let user = &anthropic["messages"][2]["content"];
    assert_eq!(user[0]["type"], "tool_result");
    assert_eq!(user[1]["text"], "also check the tests");
}

#[test]
fn several_results_in_one_message_render_as_one_tool_message_each() {
    let mut h = History::new();
    h.append(strict!(user: "go"));
    h.append(
        fuzzy!(tool_calls: [("a", "read", r#"{"path":"x"}"#), ("b", "read", r#"{"path":"y"}"#)]),
    );
    h.append(tool([result("b", "y!"), result("a", "x!")]).classify(Retention::Fuzzy));
    let (openai, anthropic) = render_valid(&h, true);
    assert_eq!(openai[2]["tool_call_id"], "a");
    assert_eq!(openai[3]["tool_call_id"], "b");
    assert_eq!(
        anthropic["messages"][2]["content"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn reused_and_unusual_call_ids_stay_paired() {
    let mut h = History::new();
    h.append(strict!(user: "go"));
    for out in ["one", "two"] {
        h.append(fuzzy!(tool_call: "call:0", "bash", json!({"command": "ls"})));
        h.append(forgettable!(tool_result("call:0"): "{out}"));
    }
    let (openai, anthropic) = render_valid(&h, true);
    assert_eq!(openai[4]["content"], "two");
    assert_eq!(anthropic["messages"][1]["content"][0]["id"], "call_0");
    assert_eq!(anthropic["messages"][3]["content"][0]["id"], "call_0_2");
    assert_eq!(
        anthropic["messages"][4]["content"][0]["tool_use_id"],
        "call_0_2"
    );
    assert_eq!(anthropic["messages"][4]["content"][0]["content"], "two");
}

#[test]
fn extensions_go_where_each_format_has_a_place() {
    let mut h = History::new();
    h.pin(
        Message::system("sys")
            .with_extension("cache_control", json!({"type": "ephemeral"}))
            .classify(Retention::Strict),
    );
    h.append(
        Message::user("hi")
            .with_extension("name", json!("ana"))
            .with_extension("role", json!("assistant"))
            .classify(Retention::Strict),
    );
    let (openai, anthropic) = render_valid(&h, true);
    assert_eq!(
        openai[1],
        json!({"role": "user", "content": "hi", "name": "ana"})
    );
    assert_eq!(openai[0]["cache_control"], json!({"type": "ephemeral"}));
    assert_eq!(
        anthropic["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        anthropic["messages"][0],
        json!({"role": "user", "content": [{"type": "text", "text": "hi"}]})
    );
}

#[test]
fn appended_system_messages_render_in_place() {
    let mut h = History::new();
    h.append(strict!(user: "go"));
    h.append(strict!(system: "Budget: 3 steps left."));
    let (openai, anthropic) = render_valid(&h, true);
    // Only pinned system entries are system messages; one in the view is a marked note
    // in both formats.
    assert_eq!(openai[1]["role"], "user");
    assert_eq!(
        openai[1]["content"],
        "<system-note>\nBudget: 3 steps left.\n</system-note>"
    );
    assert!(anthropic.get("system").is_none());
    assert_eq!(
        anthropic["messages"][0]["content"][1]["text"],
        "<system-note>\nBudget: 3 steps left.\n</system-note>"
    );
}

#[test]
fn anthropic_leaves_out_empty_text_and_wraps_non_object_arguments() {
    let mut h = History::new();
    h.append(strict!(user: "go"));
    h.append(
        assistant([
            text("  "),
            call("c1", "f", "{bad json"),
            call("c2", "f", json!([1, 2])),
        ])
        .classify(Retention::Fuzzy),
    );
    h.append(forgettable!(tool_result("c1"): ""));
    h.append(forgettable!(tool_result("c2"): "ok"));
    let (openai, anthropic) = render_valid(&h, true);
    // Blank text is sent as it is in OpenAI (not counted), left out by Anthropic.
    assert_eq!(openai[1]["content"], "  ");
    assert_eq!(
        openai[1]["tool_calls"][0]["function"]["arguments"],
        "{bad json"
    );
    let blocks = &anthropic["messages"][1]["content"];
    assert_eq!(blocks.as_array().unwrap().len(), 2);
    assert_eq!(blocks[0]["input"], json!({"arguments": "{bad json"}));
    assert_eq!(blocks[1]["input"], json!({"arguments": [1, 2]}));
    assert!(
        anthropic["messages"][2]["content"][0]
            .get("content")
            .is_none()
    );
}

#[test]
fn rendering_is_deterministic_and_prefix_stable() {
    let (h, ids) = base();
    let a = serde_json::to_string(&render_openai(&h)).unwrap();
    let b = serde_json::to_string(&render_openai(&h)).unwrap();
    assert_eq!(a, b);
    let restored: History = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
    assert_eq!(a, serde_json::to_string(&render_openai(&restored)).unwrap());
    let x = serde_json::to_string(&render_anthropic(&h).to_value()).unwrap();
    assert_eq!(
        x,
        serde_json::to_string(&render_anthropic(&restored).to_value()).unwrap()
    );

    // Appending keeps every earlier OpenAI message byte-identical (prompt-cache prefix).
    let mut longer = h.clone();
    longer.append(strict!(user: "next"));
    let before = render_openai(&h);
    let after = render_openai(&longer);
    for (i, m) in before.as_array().unwrap().iter().enumerate() {
        assert_eq!(m.to_string(), after[i].to_string());
    }
    // Same for a compacted view.
    let mut compacted = h.clone();
    apply(&mut compacted, vec![reform(ids.a2, Form::CallsOnly)]);
    assert_eq!(
        serde_json::to_string(&render_anthropic(&compacted).to_value()).unwrap(),
        serde_json::to_string(&render_anthropic(&compacted.clone()).to_value()).unwrap()
    );
}

#[test]
fn a_view_of_empty_messages_still_renders_a_well_formed_anthropic_request() {
    let mut h = History::new();
    h.append(fuzzy!(assistant: "   "));
    let (openai, anthropic) = render_valid(&h, true);
    // Nothing counted is sent: both formats send the note turn first (OpenAI keeps the
    // blank text as it is).
    assert_eq!(
        openai,
        json!([{"role": "user", "content": FIRST_TURN_NOTE}, {"role": "assistant", "content": "   "}])
    );
    assert_eq!(
        anthropic["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": FIRST_TURN_NOTE}]}])
    );
    // An empty view renders to no messages, which the validators report.
    let empty = History::new();
    assert!(render_anthropic(&empty).messages.is_empty());
    assert!(favur_context::render::validate::validate_openai(&render_openai(&empty)).is_err());
}
