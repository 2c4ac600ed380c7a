//! A server's question to the user mid-call (MCP elicitation): its message and either the fields
//! its schema asks for (form mode) — text, numbers, a yes or no, a choice — as the window shows
//! them, each with the server's default, or a page to open (URL mode, [`crate::link`]); and the
//! user's answer, a form's given back with the defaults of the fields left out (SEP-1034) and
//! only what the schema asks for, of the types it asks. The server's words are its own: the
//! window shows them as text, and nothing in them answers.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::link::QuestionLink;

/// What a server asks.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct Question {
    /// The server asking, by its name in Settings → Tools.
    pub server: String,
    pub message: String,
    pub fields: Vec<QuestionField>,
    /// A question by link: the page to open (no fields then). Accepted, the app opens it in the
    /// system's browser; the answers given there go to the server, not through Hearth.
    pub link: Option<QuestionLink>,
}

/// One field of a question's form.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct QuestionField {
    /// Its key in the answer.
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
    /// The server's default, of the field's kind.
    #[ts(type = "string | number | boolean | string[] | null")]
    pub default: Option<Value>,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum FieldKind {
    /// `format`: the schema's hint (email, uri, date, date-time), shown by the input.
    Text {
        format: Option<String>,
        min_length: Option<u64>,
        max_length: Option<u64>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// One of `options`, each a value and what it is called.
    Choice {
        options: Vec<ChoiceOption>,
    },
    /// Some of `options`: at least `min_items`, at most `max_items`.
    Choices {
        options: Vec<ChoiceOption>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct ChoiceOption {
    pub value: String,
    pub label: String,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "action", rename_all = "camelCase")]
pub enum Answer {
    /// The form, sent: the fields given (the others take their defaults); for a link, Open
    /// (the content is empty, and ignored).
    Accept {
        #[ts(type = "Record<string, string | number | boolean | string[]>")]
        content: Map<String, Value>,
    },
    /// No, to this question.
    Decline,
    /// Dismissed without a word (the call goes on as the server decides).
    Cancel,
}

/// Asks the user a server's question; answers when they have.
pub type Asker = Arc<dyn Fn(Question) -> Pin<Box<dyn Future<Output = Answer> + Send>> + Send + Sync>;

/// The fields a requested schema (a flat object of primitive properties) asks for: the required
/// first, then the others (the schema's order is not kept on the way: by name); a property of
/// another shape is left out.
pub fn fields_of(schema: &Value) -> Vec<QuestionField> {
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Vec::new() };
    let mut fields: Vec<QuestionField> = properties
        .iter()
        .filter_map(|(name, property)| {
            let text = |key: &str| property.get(key).and_then(Value::as_str).map(String::from);
            let kind = kind_of(property)?;
            let default = property.get("default").filter(|value| fits(&kind, value)).cloned();
            Some(QuestionField {
                name: name.clone(),
                title: text("title"),
                description: text("description"),
                required: required.contains(&name.as_str()),
                kind,
                default,
            })
        })
        .collect();
    fields.sort_by_key(|field| !field.required);
    fields
}

fn kind_of(property: &Value) -> Option<FieldKind> {
    let number = |key: &str| property.get(key).and_then(Value::as_f64);
    let whole = |key: &str| property.get(key).and_then(Value::as_u64);
    let choice = |value: &Value, label: Option<&Value>| {
        Some(ChoiceOption { value: value.as_str()?.to_owned(), label: label.and_then(Value::as_str).or(value.as_str())?.to_owned() })
    };
    // A choice's options: `enum` (with `enumNames`), or `oneOf`/`anyOf` of `const`s with titles.
    let options = |of: &Value| -> Option<Vec<ChoiceOption>> {
        if let Some(values) = of.get("enum").and_then(Value::as_array) {
            let names = of.get("enumNames").and_then(Value::as_array);
            return values.iter().enumerate().map(|(i, v)| choice(v, names.and_then(|n| n.get(i)))).collect();
        }
        let titled = of.get("oneOf").or_else(|| of.get("anyOf")).and_then(Value::as_array)?;
        titled.iter().map(|o| choice(o.get("const")?, o.get("title"))).collect()
    };
    if property.get("type").and_then(Value::as_str) == Some("array") {
        let options = options(property.get("items")?)?;
        return Some(FieldKind::Choices { options, min_items: whole("minItems"), max_items: whole("maxItems") });
    }
    if property.get("enum").is_some() || property.get("oneOf").is_some() {
        return Some(FieldKind::Choice { options: options(property)? });
    }
    match property.get("type").and_then(Value::as_str)? {
        "string" => Some(FieldKind::Text {
            format: property.get("format").and_then(Value::as_str).map(String::from),
            min_length: whole("minLength"),
            max_length: whole("maxLength"),
        }),
        kind @ ("number" | "integer") => {
            Some(FieldKind::Number { integer: kind == "integer", minimum: number("minimum"), maximum: number("maximum") })
        }
        "boolean" => Some(FieldKind::Boolean),
        _ => None,
    }
}

/// Whether `value` is one `kind` takes.
fn fits(kind: &FieldKind, value: &Value) -> bool {
    match (kind, value) {
        (FieldKind::Text { .. }, Value::String(_)) | (FieldKind::Boolean, Value::Bool(_)) => true,
        (FieldKind::Number { integer, .. }, Value::Number(n)) => !integer || n.is_i64() || n.is_u64(),
        (FieldKind::Choice { options }, Value::String(s)) => options.iter().any(|o| &o.value == s),
        (FieldKind::Choices { options, .. }, Value::Array(items)) => {
            items.iter().all(|item| item.as_str().is_some_and(|s| options.iter().any(|o| o.value == s)))
        }
        _ => false,
    }
}

/// What is sent back for an accepted form: each field the user gave that fits it, the default
/// of each they left out; nothing the form did not ask for.
pub fn with_defaults(fields: &[QuestionField], content: &Map<String, Value>) -> Map<String, Value> {
    fields
        .iter()
        .filter_map(|field| {
            let given = content.get(&field.name).filter(|value| fits(&field.kind, value));
            Some((field.name.clone(), given.or(field.default.as_ref())?.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The conformance suite's form (SEP-1034), and what a form left as it is sends back.
    #[test]
    fn a_form_left_as_it_is_sends_its_defaults() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive"], "enumNames": ["Active", "Inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "nested": {"type": "object"},
            "tags": {"type": "array", "maxItems": 2, "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}, "default": ["a"]},
        }, "required": ["name"]});
        let fields = fields_of(&schema);
        assert_eq!(fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["name", "age", "score", "status", "tags", "verified"]);
        assert!(matches!(&fields[4].kind, FieldKind::Choices { options, max_items: Some(2), .. } if options[1].label == "B"));
        assert!(fields.iter().find(|f| f.name == "name").is_some_and(|f| f.required && f.description.as_deref() == Some("User name")));
        let status = fields.iter().find(|f| f.name == "status").unwrap();
        assert_eq!(
            status.kind,
            FieldKind::Choice {
                options: vec![
                    ChoiceOption { value: "active".into(), label: "Active".into() },
                    ChoiceOption { value: "inactive".into(), label: "Inactive".into() }
                ]
            }
        );
        let sent = with_defaults(&fields, &Map::new());
        assert_eq!(
            Value::Object(sent),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "tags": ["a"], "verified": true})
        );
    }

    /// What the user gave wins where it fits its field; what does not fit, or was not asked for,
    /// is not sent; a default of the wrong kind is no default.
    #[test]
    fn answers_fit_their_fields() {
        let schema = json!({"type": "object", "properties": {
            "count": {"type": "integer", "minimum": 1, "default": "three"},
            "plan": {"oneOf": [{"const": "free", "title": "Free"}, {"const": "pro", "title": "Pro"}]},
            "email": {"type": "string", "format": "email", "maxLength": 80},
        }});
        let fields = fields_of(&schema);
        assert_eq!(fields.iter().find(|f| f.name == "count").unwrap().default, None);
        assert_eq!(
            fields.iter().find(|f| f.name == "email").unwrap().kind,
            FieldKind::Text { format: Some("email".into()), min_length: None, max_length: Some(80) }
        );
        let given = json!({"count": 2.5, "plan": "pro", "email": "me@example.com", "extra": "x"});
        let sent = with_defaults(&fields, given.as_object().unwrap());
        assert_eq!(Value::Object(sent), json!({"plan": "pro", "email": "me@example.com"}));
    }
}
