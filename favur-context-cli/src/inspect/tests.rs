use favur_context::audit::Ledger;
use favur_context::{History, forgettable, fuzzy};

use super::{escape_html, render_html, timeline_html};

#[test]
fn html_escaping_covers_the_five_characters() {
    let escaped = escape_html(r#"<a href="x">'&'</a>"#);
    assert_eq!(
        escaped,
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
}

#[test]
fn message_text_on_the_page_is_escaped_and_runs_nothing() {
    let mut h = History::new();
    h.append(forgettable!(tool_result("c1"): "<script>alert(1)</script>"));
    let page = render_html("agent.jsonl", &h, &Ledger::of(&h));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains("<script>alert"));
    assert_eq!(page.matches("<script").count(), 0); // no assistant message: no request, no script
    assert_eq!(page.matches("<tr class=\"entry ").count(), 1);
}

#[test]
fn the_timeline_has_a_bar_per_request() {
    let mut h = History::new();
    h.append(fuzzy!(user: "hi"));
    h.append(fuzzy!(assistant: "hello"));
    let html = timeline_html(&Ledger::of(&h));
    assert_eq!(html.matches("<a class=\"bar\"").count(), 1);
    assert!(html.contains("id=\"request-items\""));
}
