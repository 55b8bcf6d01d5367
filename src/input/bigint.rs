//! TOML integers the parser cannot hold (outside -2^63 to 2^63-1, the TOML 1.0 range): the
//! parser stops with a line, a column and its own text (`u64 value was too large`, `integer
//! ... as i128`); [`oversized_integer`] finds which key holds the literal, so the error can
//! name the key and what it accepts.

use std::ops::Range;

/// The integers a TOML document can hold, for messages.
pub const TOML_INTEGERS: &str = "-9223372036854775808 to 9223372036854775807";

/// Stands in for an oversized literal while the document is parsed again (a control
/// character cannot appear in a user's string unescaped, so it cannot be mistaken for one).
const SENTINEL: &str = "\u{1}schedlab: integer beyond TOML's range";

/// An integer literal beyond TOML's range, and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Oversized {
    /// The dotted path of the value (`workload.tasks`, `machine.cost.smt_speed_pct[1]`).
    pub path: String,
    /// The literal as written (`99999999999999999999999`).
    pub literal: String,
    /// The document, each oversized value replaced by a float of its sign and size (so a
    /// caller can ask the key's own check what it accepts).
    pub table: toml::Table,
}

impl Oversized {
    /// `got integer N, beyond the integers TOML can hold (...)`: the start of the message.
    pub fn got(&self) -> String {
        format!(
            "got integer {}, beyond the integers TOML can hold ({TOML_INTEGERS})",
            super::limits::clip(&self.literal)
        )
    }
}

/// Whether `token` is a TOML integer literal (decimal with an optional sign and `_`
/// separators, or `0x`/`0o`/`0b`).
fn is_integer_literal(token: &str) -> bool {
    let digits = token.strip_prefix(['+', '-']).unwrap_or(token);
    let (digits, radix) = match digits.get(..2) {
        Some("0x") => (&digits[2..], 16),
        Some("0o") => (&digits[2..], 8),
        Some("0b") => (&digits[2..], 2),
        _ => (digits, 10),
    };
    !digits.is_empty()
        && digits.starts_with(|c: char| c.is_digit(radix))
        && digits.chars().all(|c| c == '_' || c.is_digit(radix))
}

/// The literal's sign and size as a float (`f64::MAX` when even that overflows).
fn as_float(literal: &str) -> f64 {
    let negative = literal.starts_with('-');
    let digits: String = literal
        .trim_start_matches(['+', '-'])
        .chars()
        .filter(|&c| c != '_')
        .collect();
    let size = match digits.get(..2) {
        Some("0x") => u128::from_str_radix(&digits[2..], 16).map(|n| n as f64),
        Some("0o") => u128::from_str_radix(&digits[2..], 8).map(|n| n as f64),
        Some("0b") => u128::from_str_radix(&digits[2..], 2).map(|n| n as f64),
        _ => digits.parse::<u128>().map(|n| n as f64),
    }
    .unwrap_or(f64::MAX);
    if negative { -size } else { size }
}

/// When parsing `text` failed at `span` on an integer literal beyond TOML's range: the first
/// such value's path and literal (`None` for any other error, or when the document has
/// another error as well).
pub fn oversized_integer(text: &str, span: Range<usize>) -> Option<Oversized> {
    let mut text = text.to_string();
    let mut span = span;
    let mut literals = Vec::new();
    // Each oversized literal in turn (the parser stops at the first), at most a few hundred.
    let table = loop {
        let token = text.get(span.clone())?.trim();
        if !is_integer_literal(token) || literals.len() >= 256 {
            return None;
        }
        let marker = format!(
            "\"{}{}\"",
            SENTINEL.replace('\u{1}', "\\u0001"),
            literals.len()
        );
        literals.push(token.to_string());
        text.replace_range(span.clone(), &marker);
        match text.parse::<toml::Table>() {
            Ok(table) => break table,
            Err(e) => span = e.span()?,
        }
    };
    let mut path = None;
    let mut value = toml::Value::Table(table);
    replace(&mut value, "", &literals, &mut path);
    let toml::Value::Table(table) = value else {
        unreachable!("a table stays a table")
    };
    Some(Oversized {
        path: path?,
        literal: literals[0].clone(),
        table,
    })
}

/// Replace every sentinel under `value` (at `at`) by its literal's float; `first` gets the
/// path of the first literal's.
fn replace(value: &mut toml::Value, at: &str, literals: &[String], first: &mut Option<String>) {
    match value {
        toml::Value::String(s) if s.starts_with(SENTINEL) => {
            let i: usize = s[SENTINEL.len()..].parse().unwrap_or(0);
            if i == 0 {
                *first = Some(at.to_string());
            }
            *value = toml::Value::Float(literals.get(i).map_or(f64::MAX, |l| as_float(l)));
        }
        toml::Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                replace(item, &format!("{at}[{i}]"), literals, first);
            }
        }
        toml::Value::Table(t) => {
            for (k, v) in t.iter_mut() {
                let path = match at {
                    "" => super::shape::child("", k)[1..].to_string(),
                    _ => super::shape::child(at, k),
                };
                replace(v, &path, literals, first);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn find(text: &str) -> Option<Oversized> {
        let e = text.parse::<toml::Table>().unwrap_err();
        oversized_integer(text, e.span().unwrap())
    }

    #[test]
    fn the_key_of_an_oversized_integer_is_found() {
        let o = find("[run]\nseed = 18446744073709551615\n").unwrap();
        assert_eq!(o.path, "run.seed");
        assert_eq!(o.literal, "18446744073709551615");
        assert_eq!(
            o.table["run"]["seed"].as_float(),
            Some(18446744073709551615.0)
        );
        let o = find("[a]\nb = [1, -99_999_999_999_999_999_999]\nc = { d = 0xFFFFFFFFFFFFFFFFFF }")
            .unwrap();
        assert_eq!(o.path, "a.b[1]", "the first of two");
        assert!(o.table["a"]["b"][1].as_float().unwrap() < -9.9e19);
        assert!(o.table["a"]["c"]["d"].as_float().unwrap() > 4e21);
        let o = find("[\"x y\"]\n\"0-3\" = 99999999999999999999").unwrap();
        assert_eq!(o.path, "\"x y\".0-3");
        assert_eq!(
            o.got(),
            "got integer 99999999999999999999, beyond the integers TOML can hold \
             (-9223372036854775808 to 9223372036854775807)"
        );
        // Another error as well, or another kind of error: not this case.
        assert_eq!(find("a = 99999999999999999999\nb = ="), None);
        assert_eq!(find("a = 1.0e99999"), None);
        assert_eq!(find("a = \"x"), None);
    }
}
