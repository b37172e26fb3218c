use favur_context::{History, Message, Retention, ToolCall, fuzzy};

use super::{MaskOld, NoCompaction, Strategy, TrimOldest};

#[test]
fn no_compaction_never_acts() {
    let mut h = History::new();
    h.append(fuzzy!(user: "hi"));
    assert!(
        NoCompaction
            .before_request(&mut h)
            .is_ok_and(|b| b.event.is_none() && !b.refused)
    );
}

#[test]
fn trimming_drops_the_oldest_turns_down_to_the_budget() {
    let mut h = History::new();
    h.append(fuzzy!(user: "{}", "word ".repeat(100)));
    h.append(fuzzy!(assistant: "ok"));
    h.append(fuzzy!(user: "next"));
    let mut trim = TrimOldest { budget: 60 };
    assert!(trim.before_request(&mut h).is_ok_and(|b| b.event.is_some()));
    assert!(h.usage_tokens() <= 60); // the note turn put before the assistant turn included
    assert_eq!(h.view().len(), 2);
}

#[test]
fn masking_replaces_old_tool_outputs_and_keeps_the_newest() {
    let mut h = History::new();
    let mut mask = MaskOld::new(1);
    for i in 0..3 {
        let calls = vec![ToolCall::new(format!("c{i}"), "bash", "{}")];
        let call = h.append(Message::assistant_calls(calls).classify(Retention::Fuzzy));
        mask.observe(call, false);
        let result = Message::tool_result(format!("c{i}"), "x ".repeat(200), false);
        let out = h.append(result.classify(Retention::Fuzzy));
        mask.observe(out, true);
    }
    let before = h.usage_tokens();
    assert!(mask.before_request(&mut h).is_ok());
    assert!(h.usage_tokens() < before);
}
