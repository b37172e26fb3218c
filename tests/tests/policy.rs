//! Policy configuration: every invalid policy gives its error; TOML and JSON round trips.

use std::num::NonZeroU8;

use Action::{Drop, Keep, Summarize};
use favur_context::compact::{Action, PolicyError, Tier};
use favur_context::{Policy, Retention};

fn tiers(list: &[(f64, Action, Action, Action)]) -> Vec<Tier> {
    list.iter()
        .map(|&(at, a, b, c)| Tier::new(at, a, b, c))
        .collect()
}

#[test]
fn defaults_are_the_design_table() {
    let p = Policy::default();
    assert_eq!(p.window_tokens(), 200_000);
    assert_eq!(
        p.tiers(),
        &tiers(&[
            (0.05, Summarize, Summarize, Keep),
            (0.10, Drop, Drop, Summarize),
            (0.25, Drop, Drop, Drop),
        ])[..]
    );
    assert_eq!(p.limit(), 0.5);
    assert_eq!(p.keep_recent(), 0);
    assert_eq!(p.entry_cap_tokens(), None);
    assert_eq!(p.tier_for(9_999), None);
    assert_eq!(p.tier_for(10_000), NonZeroU8::new(1));
    assert_eq!(p.tier_for(20_000), NonZeroU8::new(2));
    assert_eq!(p.tier_for(50_000), NonZeroU8::new(3));
    assert_eq!(p.limit_tokens(), 100_000);
}

#[test]
fn every_invalid_policy_gives_its_error() {
    let b = Policy::builder;
    let cases: Vec<(Result<Policy, PolicyError>, PolicyError, &str)> = vec![
        (
            b().window_tokens(0).build(),
            PolicyError::ZeroWindow,
            "window_tokens",
        ),
        (b().tiers([]).build(), PolicyError::NoTiers, "tiers"),
        (
            b().threshold(NonZeroU8::new(1).unwrap(), 0.0).build(),
            PolicyError::ThresholdOutOfRange {
                index: 0,
                value: 0.0,
            },
            "tiers[0].at",
        ),
        (
            b().threshold(NonZeroU8::new(3).unwrap(), 1.5).build(),
            PolicyError::ThresholdOutOfRange {
                index: 2,
                value: 1.5,
            },
            "tiers[2].at",
        ),
        (
            b().threshold(NonZeroU8::new(2).unwrap(), 0.05).build(),
            PolicyError::ThresholdNotIncreasing {
                index: 1,
                value: 0.05,
                previous: 0.05,
            },
            "tiers[1].at",
        ),
        (
            b().tiers(tiers(&[
                (0.1, Summarize, Summarize, Keep),
                (0.2, Keep, Drop, Drop),
            ]))
            .build(),
            PolicyError::MilderAction {
                index: 1,
                class: Retention::Forgettable,
                action: Keep,
                previous: Summarize,
            },
            "tiers[1].forgettable",
        ),
        (
            b().tiers(tiers(&[(0.1, Summarize, Keep, Keep)]))
                .limit(0.1)
                .build(),
            PolicyError::LimitNotAboveTiers {
                value: 0.1,
                highest: 0.1,
            },
            "limit",
        ),
        (
            b().tiers(tiers(&[(0.1, Drop, Keep, Keep)])).build(),
            PolicyError::FirstTierDrops {
                class: Retention::Forgettable,
            },
            "tiers[0].forgettable",
        ),
        (
            b().limit(0.0).build(),
            PolicyError::LimitOutOfRange { value: 0.0 },
            "limit",
        ),
        (
            b().limit(1.01).build(),
            PolicyError::LimitOutOfRange { value: 1.01 },
            "limit",
        ),
        (
            b().summary_budget_tokens(0).build(),
            PolicyError::ZeroSummaryBudget,
            "summary_budget_tokens",
        ),
        (
            b().entry_cap_tokens(Some(0)).build(),
            PolicyError::ZeroEntryCap,
            "entry_cap_tokens",
        ),
    ];
    for (got, want, field) in cases {
        let err = got.expect_err("invalid policy accepted");
        assert_eq!(err, want);
        assert!(
            err.to_string().starts_with(field),
            "{err} should name {field}"
        );
    }
    // NaN is out of range, not silently accepted.
    let err = b()
        .threshold(NonZeroU8::new(1).unwrap(), f64::NAN)
        .build()
        .unwrap_err();
    assert!(matches!(
        err,
        PolicyError::ThresholdOutOfRange { index: 0, .. }
    ));
}

#[test]
fn invalid_files_give_their_error() {
    let err = Policy::from_toml_str("window_tokens = 0").unwrap_err();
    assert!(err.to_string().contains("window_tokens"), "{err}");
    let err = Policy::from_toml_str("windw_tokens = 10").unwrap_err();
    assert!(matches!(err, PolicyError::Toml(_)));
    assert!(err.to_string().contains("windw_tokens"), "{err}");
    let err = Policy::from_toml_str(
        "[[tiers]]\nat = 0.1\nforgettable = \"forget\"\nfuzzy = \"keep\"\nstrict = \"keep\"",
    )
    .unwrap_err();
    assert!(err.to_string().contains("forget"), "{err}");
    let err = Policy::from_json_str(r#"{"tiers": [{"at": 0.2, "forgettable": "summarize", "fuzzy": "keep", "strict": "keep"}, {"at": 0.1, "forgettable": "drop", "fuzzy": "drop", "strict": "drop"}]}"#).unwrap_err();
    assert!(err.to_string().contains("tiers[1].at"), "{err}");
    let err = Policy::from_json_str("{").unwrap_err();
    assert!(matches!(err, PolicyError::Json(_)));
    let dir = std::env::temp_dir().join(format!("favur-policy-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = dir.join("policy.yaml");
    std::fs::write(&yaml, "window_tokens: 3").unwrap();
    let err = Policy::load(&yaml).unwrap_err();
    assert!(matches!(err, PolicyError::File { .. }));
    assert!(err.to_string().contains("extension"));
    let err = Policy::load(dir.join("absent.toml")).unwrap_err();
    assert!(matches!(err, PolicyError::File { .. }));
}

#[test]
fn toml_and_json_round_trip() {
    let custom = Policy::builder()
        .window_tokens(128_000)
        .tiers(tiers(&[
            (0.02, Summarize, Keep, Keep),
            (0.08, Drop, Summarize, Keep),
            (0.2, Drop, Drop, Summarize),
            (0.4, Drop, Drop, Drop),
        ]))
        .limit(0.75)
        .entry_cap_tokens(Some(6_000))
        .summary_budget_tokens(300)
        .keep_recent(2)
        .build()
        .unwrap();
    for p in [Policy::default(), custom] {
        let toml = p.to_toml_string();
        assert_eq!(Policy::from_toml_str(&toml).unwrap(), p, "{toml}");
        let json = p.to_json_string();
        assert_eq!(Policy::from_json_str(&json).unwrap(), p, "{json}");
        let dir = std::env::temp_dir().join(format!("favur-policy-rt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("p.toml"), &toml).unwrap();
        std::fs::write(dir.join("p.json"), &json).unwrap();
        assert_eq!(Policy::load(dir.join("p.toml")).unwrap(), p);
        assert_eq!(Policy::load(dir.join("p.json")).unwrap(), p);
    }
    insta::assert_snapshot!("default_policy_toml", Policy::default().to_toml_string());
}

#[test]
fn omitted_fields_take_their_defaults() {
    let p = Policy::from_toml_str("window_tokens = 32000").unwrap();
    assert_eq!(p.tiers(), Policy::default().tiers());
    assert_eq!(p.limit(), 0.5);
    let p = Policy::from_json_str("{}").unwrap();
    assert_eq!(p, Policy::default());
}

#[test]
fn min_reclaim_is_read_and_checked() {
    let p = favur_context::Policy::from_toml_str("min_reclaim = 0.02\n").unwrap();
    assert_eq!(p.min_reclaim_tokens(), 4_000);
    for bad in ["min_reclaim = -0.1\n", "min_reclaim = 0.5\n"] {
        let err = favur_context::Policy::from_toml_str(bad).unwrap_err();
        assert!(err.to_string().contains("min_reclaim"), "{err}");
    }
}
