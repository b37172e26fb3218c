//! Parsing one rule of a rules file, with located, typed errors.

use regex::Regex;

use super::{KeyFrom, Rule, RulesError};
use crate::model::message::Role;
use crate::model::retention::Retention;

pub(super) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

pub(super) fn type_name(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("the string {s:?}"),
        toml::Value::Integer(i) => format!("the integer {i}"),
        toml::Value::Float(x) => format!("the float {x}"),
        toml::Value::Boolean(b) => format!("the boolean {b}"),
        toml::Value::Datetime(d) => format!("the datetime {d}"),
        toml::Value::Array(_) => "an array".to_owned(),
        toml::Value::Table(_) => "a table".to_owned(),
    }
}

/// Field `field` of rule `rule` (named `name`, if known) is `found`, not `expected`.
pub(super) fn invalid_value(
    rule: usize,
    name: Option<&str>,
    field: &str,
    expected: &'static str,
    found: String,
) -> RulesError {
    RulesError::InvalidValue {
        rule,
        name: name.map(str::to_owned),
        field: field.to_owned(),
        expected,
        found,
    }
}

pub(super) fn parse_class(
    value: &toml::Value,
    rule: usize,
    name: Option<&str>,
    field: &str,
) -> Result<Retention, RulesError> {
    let expected = "one of \"forgettable\", \"fuzzy\", \"strict\"";
    let invalid = |found: String| invalid_value(rule, name, field, expected, found);
    match value {
        toml::Value::String(s) => s.parse().map_err(|_| invalid(format!("{s:?}"))),
        other => Err(invalid(type_name(other))),
    }
}

fn parse_role(s: &str) -> Option<Role> {
    match s {
        "system" => Some(Role::System),
        "user" => Some(Role::User),
        "assistant" => Some(Role::Assistant),
        "tool" => Some(Role::Tool),
        _ => None,
    }
}

pub(super) fn parse_rule(raw: &toml::Value, number: usize) -> Result<Rule, RulesError> {
    let table = match raw {
        toml::Value::Table(t) => t,
        other => {
            return Err(invalid_value(
                number,
                None,
                "rule",
                "a table",
                type_name(other),
            ));
        }
    };
    let name = match table.get("name") {
        None => {
            return Err(RulesError::MissingField {
                rule: number,
                name: None,
                field: "name",
            });
        }
        Some(toml::Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(other) => {
            let found = type_name(other);
            return Err(invalid_value(
                number,
                None,
                "name",
                "a non-empty string",
                found,
            ));
        }
    };
    let named = Some(name.as_str());
    let mut rule = Rule {
        name: name.clone(),
        roles: None,
        tool: None,
        command: None,
        arguments: None,
        first: None,
        class: Retention::Strict,
        pin: false,
        key: None,
    };
    let mut class = None;
    for (key, value) in table {
        match key.as_str() {
            "name" => {}
            "class" => class = Some(parse_class(value, number, named, "class")?),
            field @ ("first" | "pin") => {
                let toml::Value::Boolean(b) = value else {
                    let found = type_name(value);
                    return Err(invalid_value(number, named, field, "true or false", found));
                };
                if field == "first" {
                    rule.first = Some(*b);
                } else {
                    rule.pin = *b;
                }
            }
            "key" => {
                let expected = "\"path\" or \"command\"";
                rule.key = Some(match value {
                    toml::Value::String(s) if s == "path" => KeyFrom::Path,
                    toml::Value::String(s) if s == "command" => KeyFrom::Command,
                    toml::Value::String(s) => {
                        return Err(invalid_value(
                            number,
                            named,
                            "key",
                            expected,
                            format!("{s:?}"),
                        ));
                    }
                    other => {
                        let found = type_name(other);
                        return Err(invalid_value(number, named, "key", expected, found));
                    }
                });
            }
            "role" => {
                let expected =
                    "\"system\", \"user\", \"assistant\", \"tool\" or a non-empty array of them";
                let invalid = |found: String| invalid_value(number, named, "role", expected, found);
                let list: Vec<&toml::Value> = match value {
                    toml::Value::Array(items) if !items.is_empty() => items.iter().collect(),
                    toml::Value::Array(_) => return Err(invalid("an empty array".into())),
                    single => vec![single],
                };
                let mut roles = Vec::new();
                for v in list {
                    match v {
                        toml::Value::String(s) => match parse_role(s) {
                            Some(r) => roles.push(r),
                            None => return Err(invalid(format!("{s:?}"))),
                        },
                        other => return Err(invalid(type_name(other))),
                    }
                }
                rule.roles = Some(roles);
            }
            field @ ("tool" | "command" | "arguments") => {
                let pattern = match value {
                    toml::Value::String(s) => s,
                    other => {
                        let found = type_name(other);
                        return Err(invalid_value(
                            number,
                            named,
                            field,
                            "a string (a regex)",
                            found,
                        ));
                    }
                };
                let re = Regex::new(pattern).map_err(|e| RulesError::InvalidRegex {
                    rule: number,
                    name: Some(name.clone()),
                    field: field.to_owned(),
                    error: e.to_string(),
                })?;
                match field {
                    "tool" => rule.tool = Some(re),
                    "command" => rule.command = Some(re),
                    _ => rule.arguments = Some(re),
                }
            }
            other => {
                return Err(RulesError::UnknownField {
                    rule: number,
                    name: Some(name.clone()),
                    field: other.to_owned(),
                });
            }
        }
    }
    rule.class = class.ok_or_else(|| RulesError::MissingField {
        rule: number,
        name: Some(name.clone()),
        field: "class",
    })?;
    Ok(rule)
}
