//! What a raw TOML value accepts, for tables handed on unparsed (`[machine.cost]`): one check
//! and one wording, so that every error names the full path of the value at fault
//! (`machine.cost.idle_states[0].exit_latency_ns`), the value, and what is accepted (the
//! range, the names, the keys of a table), never serde's text cut at the table's name.
//!
//! [`check`] walks a value against its [`Shape`] and returns it normalized (an integral
//! float such as `1e3` becomes the integer 1000), so that the typed reader that follows
//! cannot fail on it.

use super::keys::{describe, expected, unknown_key};
use super::limits::clip;

/// What one value accepts.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// A whole number from `min` to `max` (at most 2^63-1; an integral float such as `1e3`
    /// too); `unit` follows the range in messages (`" ns"`).
    Int {
        min: u64,
        max: u64,
        unit: &'static str,
    },
    /// `true` or `false`.
    Bool,
    /// Any string.
    Str,
    /// One of these names.
    Name(&'static [&'static str]),
    /// An array of `min` to `max` items (`usize::MAX`: no maximum of its own), each `item`.
    Array {
        item: &'static Shape,
        min: usize,
        max: usize,
    },
    /// A table with these keys, each optional unless it is `required`.
    Table(&'static [Key]),
    /// A table whose keys are `key_about` (checked by the caller) and whose values are
    /// `value`, such as `example`.
    Map {
        key_about: &'static str,
        value: &'static Shape,
        example: &'static str,
    },
}

/// One key of a [`Shape::Table`].
#[derive(Debug, Clone, Copy)]
pub struct Key {
    pub name: &'static str,
    pub shape: Shape,
    pub required: bool,
}

/// A value that does not fit its shape: the full path of the value at fault and the message
/// (`got integer -5; accepted: an integer from 1 to 100`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError {
    pub path: String,
    pub message: String,
}

/// What `shape` accepts, as the end of a message (`accepted: ...`).
pub fn accepted(shape: &Shape) -> String {
    match shape {
        Shape::Int { min, max, unit } => format!("an integer from {min} to {max}{unit}"),
        Shape::Bool => "true or false".to_string(),
        Shape::Str => "a string".to_string(),
        Shape::Name(names) => format!("one of {}", names.join(", ")),
        Shape::Array { item, min, max } => {
            let count = match *max {
                usize::MAX => format!("{min} or more"),
                max => format!("{min} to {max}"),
            };
            format!("an array of {count} items, each {}", accepted(item))
        }
        Shape::Table(keys) => {
            let each: Vec<String> = keys
                .iter()
                .map(|k| {
                    let need = if k.required { "required, " } else { "" };
                    format!("{} ({need}{})", k.name, accepted(&k.shape))
                })
                .collect();
            format!("a table of {}", each.join(", "))
        }
        Shape::Map {
            key_about,
            value,
            example,
        } => format!(
            "a table of {key_about} = {}, such as {example}",
            accepted(value)
        ),
    }
}

/// `path.key`, the key quoted when it is not a bare TOML key (`path."0-3"`), escaped and
/// clipped for a message.
pub fn child(path: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match bare {
        true => format!("{path}.{}", clip(key)),
        false => format!("{path}.\"{}\"", clip(key)),
    }
}

/// Check `value` (at `path`) against `shape`; the value normalized, or the error naming the
/// innermost value at fault.
pub fn check(path: &str, value: &toml::Value, shape: &Shape) -> Result<toml::Value, ShapeError> {
    let fail = |message: String| ShapeError {
        path: path.to_string(),
        message,
    };
    let wrong = || fail(expected(&accepted(shape), describe(value)));
    match (shape, value) {
        (Shape::Int { min, max, .. }, _) => match whole_number(value) {
            Some(n) if (*min..=*max).contains(&n) => Ok(toml::Value::Integer(n as i64)),
            _ => Err(wrong()),
        },
        (Shape::Bool, toml::Value::Boolean(_)) | (Shape::Str, toml::Value::String(_)) => {
            Ok(value.clone())
        }
        (Shape::Name(names), toml::Value::String(s)) => match names.contains(&s.as_str()) {
            true => Ok(value.clone()),
            false => Err(fail(format!(
                "unknown value '{}'{}; accepted: {}",
                clip(s),
                super::did_you_mean(s, names),
                names.join(", ")
            ))),
        },
        (Shape::Array { item, min, max }, toml::Value::Array(items)) => {
            if !(*min..=*max).contains(&items.len()) {
                let got = format!("an array of {} items", items.len());
                return Err(fail(expected(&accepted(shape), got)));
            }
            let checked = items
                .iter()
                .enumerate()
                .map(|(i, v)| check(&format!("{path}[{i}]"), v, item))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(toml::Value::Array(checked))
        }
        (Shape::Table(keys), toml::Value::Table(t)) => check_table(path, t, keys, shape),
        (Shape::Map { value: each, .. }, toml::Value::Table(t)) => {
            let mut out = toml::Table::new();
            for (k, v) in t {
                // Always quoted, as a CPU list is written (`nontask_pct."0-3"`).
                let at = format!("{path}.\"{}\"", clip(k));
                out.insert(k.clone(), check(&at, v, each)?);
            }
            Ok(toml::Value::Table(out))
        }
        _ => Err(wrong()),
    }
}

/// A whole number from 0 to 2^63-1: an integer, or an integral float (`1e3`).
fn whole_number(value: &toml::Value) -> Option<u64> {
    match value {
        toml::Value::Integer(i) => u64::try_from(*i).ok(),
        toml::Value::Float(f) if f.is_finite() && f.fract() == 0.0 && *f >= 0.0 => {
            (*f < 9.2e18).then_some(*f as u64)
        }
        _ => None,
    }
}

fn check_table(
    path: &str,
    t: &toml::Table,
    keys: &[Key],
    shape: &Shape,
) -> Result<toml::Value, ShapeError> {
    let names: Vec<&str> = keys.iter().map(|k| k.name).collect();
    let mut out = toml::Table::new();
    for (k, v) in t {
        let at = child(path, k);
        let Some(key) = keys.iter().find(|key| key.name == k) else {
            return Err(ShapeError {
                path: at,
                message: unknown_key(k, &names, &[]),
            });
        };
        out.insert(k.clone(), check(&at, v, &key.shape)?);
    }
    if let Some(missing) = keys.iter().find(|k| k.required && !t.contains_key(k.name)) {
        return Err(ShapeError {
            path: path.to_string(),
            message: format!(
                "missing key '{}'; accepted: {}",
                missing.name,
                accepted(shape)
            ),
        });
    }
    Ok(toml::Value::Table(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PCT: Shape = Shape::Int {
        min: 1,
        max: 100,
        unit: " (percent)",
    };
    const ITEM: Shape = Shape::Table(&[
        Key {
            name: "name",
            shape: Shape::Str,
            required: true,
        },
        Key {
            name: "on",
            shape: Shape::Bool,
            required: false,
        },
    ]);

    fn value(text: &str) -> toml::Value {
        let t: toml::Table = format!("v = {text}").parse().unwrap();
        t["v"].clone()
    }

    fn err(text: &str, shape: &Shape) -> (String, String) {
        let e = check("t.v", &value(text), shape).unwrap_err();
        (e.path, e.message)
    }

    #[test]
    fn errors_name_the_innermost_value_and_what_it_accepts() {
        let list = Shape::Array {
            item: &PCT,
            min: 1,
            max: usize::MAX,
        };
        assert_eq!(
            check("t.v", &value("[1e2, 5]"), &list).unwrap(),
            value("[100, 5]")
        );
        assert_eq!(
            err("[100, -5]", &list),
            (
                "t.v[1]".into(),
                "got integer -5; accepted: an integer from 1 to 100 (percent)".into()
            )
        );
        assert_eq!(
            err("[]", &list).1,
            "got an array of 0 items; accepted: an array of 1 or more items, each an integer \
             from 1 to 100 (percent)"
        );
        assert_eq!(
            err(
                "[{ name = 'a', bogus = 1 }]",
                &Shape::Array {
                    item: &ITEM,
                    min: 1,
                    max: 2
                }
            ),
            (
                "t.v[0].bogus".into(),
                "unknown key; accepted: name, on".into()
            )
        );
        assert_eq!(
            err("{ on = true }", &ITEM),
            (
                "t.v".into(),
                "missing key 'name'; accepted: a table of name (required, a string), on (true \
                 or false)"
                    .into()
            )
        );
        let names = Shape::Name(&["menu", "teo"]);
        assert_eq!(
            err("'mneu'", &names).1,
            "unknown value 'mneu' (did you mean menu?); accepted: menu, teo"
        );
        assert_eq!(
            err("3", &names).1,
            "got integer 3; accepted: one of menu, teo"
        );
        let map = Shape::Map {
            key_about: "a CPU list",
            value: &PCT,
            example: "{ \"0-3\" = 10 }",
        };
        assert_eq!(
            err("{ '0-3' = 'a' }", &map).0,
            "t.v.\"0-3\"",
            "a map's keys are quoted"
        );
        assert_eq!(
            err("1e9", &map).1,
            "got float 1000000000; accepted: a table of a CPU list = an integer from 1 to 100 \
             (percent), such as { \"0-3\" = 10 }"
        );
    }
}
