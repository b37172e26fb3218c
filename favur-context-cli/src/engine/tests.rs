use favur_context::compact::BuiltinSummarizer;
use favur_context::{History, Policy, fuzzy};

use super::{LibRenderer, PolicyStrategy, RequestFormat};
use crate::replay::Renderer;
use crate::strategy::Strategy;

#[test]
fn the_policy_strategy_reports_its_tiers_and_a_label_naming_what_differs() {
    let mut s = PolicyStrategy::new(Policy::default(), Default::default());
    let mut h = History::new();
    h.append(fuzzy!(user: "hi"));
    assert!(s.before_request(&mut h).is_ok_and(|b| !b.refused));
    assert_eq!(s.thresholds(), vec![0.05, 0.10, 0.25, 0.5]);
    assert_eq!(s.label(), "policy");
    let names = BuiltinSummarizer {
        max_identifiers: 80,
        ..Default::default()
    };
    assert_eq!(
        PolicyStrategy::new(Policy::default(), names).label(),
        "policy (identifier list 80)"
    );
}

#[test]
fn an_empty_history_renders_as_an_empty_openai_request() {
    let v = LibRenderer(RequestFormat::OpenAi).render(&History::new());
    assert!(v.is_ok_and(|v| v.is_array()));
}
