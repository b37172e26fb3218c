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
    let name = rule_name(table, number)?;
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
            "key" => rule.key = Some(parse_key(value, number, named)?),
            "role" => rule.roles = Some(parse_roles(value, number, named)?),
            field @ ("tool" | "command" | "arguments") => {
                let re = parse_pattern(value, number, &name, field)?;
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

/// A rule's `name`: a non-empty string, required.
fn rule_name(table: &toml::Table, number: usize) -> Result<String, RulesError> {
    match table.get("name") {
        None => Err(RulesError::MissingField {
            rule: number,
            name: None,
            field: "name",
        }),
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(other) => Err(invalid_value(
            number,
            None,
            "name",
            "a non-empty string",
            type_name(other),
        )),
    }
}

/// A rule's `key`: where its entries' key comes from, `"path"` or `"command"`.
fn parse_key(
    value: &toml::Value,
    number: usize,
    named: Option<&str>,
) -> Result<KeyFrom, RulesError> {
    let expected = "\"path\" or \"command\"";
    match value {
        toml::Value::String(s) if s == "path" => Ok(KeyFrom::Path),
        toml::Value::String(s) if s == "command" => Ok(KeyFrom::Command),
        toml::Value::String(s) => Err(invalid_value(
            number,
            named,
            "key",
            expected,
            format!("{s:?}"),
        )),
        other => Err(invalid_value(
            number,
            named,
            "key",
            expected,
            type_name(other),
        )),
    }
}

/// A rule's `role`: one role name or a non-empty array of them.
fn parse_roles(
    value: &toml::Value,
    number: usize,
    named: Option<&str>,
) -> Result<Vec<Role>, RulesError> {
    let expected = "\"system\", \"user\", \"assistant\", \"tool\" or a non-empty array of them";
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
    Ok(roles)
}

/// A rule's `tool`, `command` or `arguments`: a string that compiles as a regex.
fn parse_pattern(
    value: &toml::Value,
    number: usize,
    name: &str,
    field: &str,
) -> Result<Regex, RulesError> {
    let pattern = match value {
        toml::Value::String(s) => s,
        other => {
            return Err(invalid_value(
                number,
                Some(name),
                field,
                "a string (a regex)",
                type_name(other),
            ));
        }
    };
    Regex::new(pattern).map_err(|e| RulesError::InvalidRegex {
        rule: number,
        name: Some(name.to_owned()),
        field: field.to_owned(),
        error: e.to_string(),
    })
}
