use super::{identifiers, is_identifier, presence_keys};

#[test]
fn identifiers_are_paths_snake_and_camel_names_codes_and_long_numbers() {
    for word in [
        "django/forms/widgets.py",
        "get_ordering",
        "models.E015",
        "MediaOrderConflictWarning",
        "145",
    ] {
        assert!(is_identifier(word), "{word}");
    }
    for word in ["the", "Media", "7"] {
        assert!(!is_identifier(word), "{word}");
    }
}

#[test]
fn identifiers_are_cut_from_prose_without_their_punctuation() {
    let found: Vec<&str> = identifiers("see ./django/db/models/base.py:1234 for E015.").collect();
    assert_eq!(found, ["django/db/models/base.py", "1234", "E015"]);
}

#[test]
fn a_dotted_name_is_present_by_its_parts_and_a_number_only_whole() {
    let keys: Vec<&str> = presence_keys("compiler.execute_sql").collect();
    assert!(keys.contains(&"execute_sql") && keys.contains(&"compiler.execute_sql"));
    assert!(!presence_keys("12300").any(|k| k == "230"));
}
