//! One typed reader for TOML tables: a serde `Deserializer` over `toml::Value` whose errors
//! all have one wording and name the dotted key at fault.
//!
//! Scenario sections and every `[workload]` kind are plain serde-derived structs with
//! `#[serde(deny_unknown_fields)]`; [`from_table`] fills one from a table and turns any
//! problem into an [`InputError`] naming the origin of the key (file, `--set`, ...), the
//! dotted key, and what is accepted:
//!
//! * a wrong type or value: `got string "x"; accepted: an integer from 0 to 4294967295`;
//! * an unknown key: `unknown key (did you mean groups?); accepted: variant, groups, ...`;
//! * an unknown name for an enumerated key: `unknown value 'fork'; accepted: process, thread`.
//!
//! Checks beyond the type (a minimum, a relation between keys) use [`expected`] so they read
//! the same. An integer key with a range of its own is a [`UInt`]: its range is stated once,
//! in its type, and both a wrong type and a value out of range name that range (not the
//! machine type's).

use std::fmt;

use serde::de::{self, DeserializeOwned, Expected, IntoDeserializer, Unexpected, Visitor};

use super::did_you_mean;
use crate::error::{InputError, InputResult};

/// How a TOML value is named in messages: `string "x"`, `integer 5`, `a table`.
pub fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("string \"{}\"", super::limits::clip(s)),
        toml::Value::Integer(n) => format!("integer {n}"),
        toml::Value::Float(x) => format!("float {x}"),
        toml::Value::Boolean(b) => format!("boolean {b}"),
        toml::Value::Datetime(d) => format!("datetime {d}"),
        toml::Value::Array(_) => "an array".to_string(),
        toml::Value::Table(_) => "a table".to_string(),
    }
}

/// The one wording of a value error: `got GOT; accepted: ACCEPTED`.
pub fn expected(accepted: &str, got: impl fmt::Display) -> String {
    format!("got {got}; accepted: {accepted}")
}

/// An error while deserializing: the dotted key (set by the innermost value) and the text.
#[derive(Debug)]
pub struct KeyError {
    key: Option<String>,
    message: String,
    /// For an unknown key: its name and the struct's keys (for a did-you-mean over more).
    unknown: Option<(String, &'static [&'static str])>,
}

impl KeyError {
    fn at(mut self, path: &str) -> Self {
        if self.key.is_none() && !path.is_empty() {
            self.key = Some(path.to_string());
        }
        self
    }
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for KeyError {}

/// An integer key accepted from `LO` to `HI` (both included). Deserializing anything else —
/// another type, a negative or out-of-range integer — fails with `got ...; accepted: an
/// integer from LO to HI`, the key's own range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct UInt<const LO: u64, const HI: u64>(pub u64);

impl<const LO: u64, const HI: u64> UInt<LO, HI> {
    pub fn get(self) -> u64 {
        self.0
    }
}

struct UIntVisitor<const LO: u64, const HI: u64>;

impl<const LO: u64, const HI: u64> Visitor<'_> for UIntVisitor<LO, HI> {
    type Value = UInt<LO, HI>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an integer from {LO} to {HI}")
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        match (LO..=HI).contains(&v) {
            true => Ok(UInt(v)),
            false => Err(E::invalid_value(Unexpected::Unsigned(v), &self)),
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::invalid_value(Unexpected::Signed(v), &self)),
        }
    }
}

impl<'de, const LO: u64, const HI: u64> de::Deserialize<'de> for UInt<LO, HI> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_u64(UIntVisitor::<LO, HI>)
    }
}

/// serde's name for what it wanted, in the words of the project's messages.
fn accepted_text(exp: &dyn Expected) -> String {
    let s = exp.to_string();
    let int = |lo: i128, hi: i128| format!("an integer from {lo} to {hi}");
    match s.as_str() {
        "u8" => int(0, u8::MAX.into()),
        "u16" => int(0, u16::MAX.into()),
        "u32" => int(0, u32::MAX.into()),
        "u64" | "usize" => int(0, i64::MAX.into()),
        "i8" => int(i8::MIN.into(), i8::MAX.into()),
        "i16" => int(i16::MIN.into(), i16::MAX.into()),
        "i32" => int(i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => int(i64::MIN.into(), i64::MAX.into()),
        "f32" | "f64" => "a number".to_string(),
        "a boolean" => "true or false".to_string(),
        "a string" | "a borrowed string" => "a string".to_string(),
        "a sequence" => "an array".to_string(),
        "option" => "a value".to_string(),
        other if other.starts_with("struct ") || other.starts_with("a map") => {
            "a table".to_string()
        }
        other => other.to_string(),
    }
}

fn unexpected_text(u: &Unexpected) -> String {
    match u {
        Unexpected::Bool(b) => format!("boolean {b}"),
        Unexpected::Unsigned(n) => format!("integer {n}"),
        Unexpected::Signed(n) => format!("integer {n}"),
        Unexpected::Float(x) => format!("float {x}"),
        Unexpected::Str(s) => format!("string \"{}\"", super::limits::clip(s)),
        Unexpected::Seq => "an array".to_string(),
        Unexpected::Map => "a table".to_string(),
        other => other.to_string(),
    }
}

impl de::Error for KeyError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        KeyError {
            key: None,
            message: msg.to_string(),
            unknown: None,
        }
    }

    fn invalid_type(unexp: Unexpected, exp: &dyn Expected) -> Self {
        Self::custom(expected(&accepted_text(exp), unexpected_text(&unexp)))
    }

    fn invalid_value(unexp: Unexpected, exp: &dyn Expected) -> Self {
        Self::invalid_type(unexp, exp)
    }

    fn unknown_variant(variant: &str, accepted: &'static [&'static str]) -> Self {
        Self::custom(format!(
            "unknown value '{}'{}; accepted: {}",
            super::limits::clip(variant),
            did_you_mean(variant, accepted),
            accepted.join(", ")
        ))
    }

    fn unknown_field(field: &str, accepted: &'static [&'static str]) -> Self {
        let mut e = Self::custom(unknown_key(field, accepted, &[]));
        // Kept so that `from_table_also` can suggest from more lists.
        e.unknown = Some((field.to_string(), accepted));
        e
    }

    fn missing_field(field: &'static str) -> Self {
        Self::custom(format!("missing key '{field}'"))
    }
}

/// A TOML value with its dotted path.
struct ValueDe<'a> {
    value: &'a toml::Value,
    path: String,
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'de> de::Deserializer<'de> for ValueDe<'_> {
    type Error = KeyError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, KeyError> {
        let path = self.path;
        let r = match self.value {
            toml::Value::String(s) => visitor.visit_str(s),
            toml::Value::Integer(n) => visitor.visit_i64(*n),
            toml::Value::Float(x) => visitor.visit_f64(*x),
            toml::Value::Boolean(b) => visitor.visit_bool(*b),
            toml::Value::Datetime(d) => visitor.visit_string(d.to_string()),
            toml::Value::Array(a) => visitor.visit_seq(SeqDe {
                items: a.iter().enumerate(),
                path: path.clone(),
            }),
            toml::Value::Table(t) => visitor.visit_map(MapDe::new(t, &path)),
        };
        r.map_err(|e| e.at(&path))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, KeyError> {
        // A key that is present is `Some`; absent keys are never visited.
        visitor.visit_some(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, KeyError> {
        match self.value {
            toml::Value::String(s) => visitor
                .visit_enum(s.as_str().into_deserializer())
                .map_err(|e: KeyError| e.at(&self.path)),
            other => Err(KeyError {
                unknown: None,
                key: Some(self.path.clone()),
                message: expected(&format!("one of {}", variants.join(", ")), describe(other)),
            }),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

struct SeqDe<'a, I: Iterator<Item = (usize, &'a toml::Value)>> {
    items: I,
    path: String,
}

impl<'de, 'a, I: Iterator<Item = (usize, &'a toml::Value)>> de::SeqAccess<'de> for SeqDe<'a, I> {
    type Error = KeyError;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, KeyError> {
        match self.items.next() {
            None => Ok(None),
            Some((i, v)) => seed
                .deserialize(ValueDe {
                    value: v,
                    path: format!("{}[{i}]", self.path),
                })
                .map(Some),
        }
    }
}

struct MapDe<'a> {
    entries: toml::map::Iter<'a, String, toml::Value>,
    pending: Option<(&'a String, &'a toml::Value)>,
    path: String,
}

impl<'a> MapDe<'a> {
    fn new(t: &'a toml::Table, path: &str) -> Self {
        MapDe {
            entries: t.iter(),
            pending: None,
            path: path.to_string(),
        }
    }
}

impl<'de> de::MapAccess<'de> for MapDe<'_> {
    type Error = KeyError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, KeyError> {
        let Some((k, v)) = self.entries.next() else {
            return Ok(None);
        };
        self.pending = Some((k, v));
        let path = child(&self.path, k);
        seed.deserialize(de::value::StrDeserializer::<KeyError>::new(k))
            .map(Some)
            .map_err(|e| e.at(&path))
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, KeyError> {
        let (k, v) = self
            .pending
            .take()
            .ok_or_else(|| de::Error::custom("value requested before its key"))?;
        seed.deserialize(ValueDe {
            value: v,
            path: child(&self.path, k),
        })
    }
}

/// Keys of a table read elsewhere, as `(label, keys)` for messages (`placement: cpus, ...`).
pub type AlsoKeys<'a> = &'a [(&'a str, &'a [&'a str])];

/// `unknown key (did you mean X?); accepted: A, B; LABEL: C` — suggestions drawn from all
/// the lists.
pub fn unknown_key(field: &str, accepted: &[&str], also: AlsoKeys) -> String {
    let mut all: Vec<&str> = accepted.to_vec();
    let mut tail = String::new();
    for (label, keys) in also {
        all.extend(keys.iter());
        tail.push_str(&format!("; {label}: {}", keys.join(", ")));
    }
    format!(
        "unknown key{}; accepted: {}{tail}",
        did_you_mean(field, &all),
        accepted.join(", ")
    )
}

/// Fill `T` from `table`, whose keys live under `prefix` (e.g. `workload`). Errors name the
/// origin of the key at fault (`origin_of(dotted key)`), the key, and what is accepted.
pub fn from_table<T: DeserializeOwned>(
    table: &toml::Table,
    prefix: &str,
    origin_of: &dyn Fn(&str) -> String,
) -> InputResult<T> {
    from_table_also(table, prefix, origin_of, &[])
}

/// [`from_table`] where the table may also hold keys read elsewhere (`also`, already taken
/// out): an unknown key's message lists them too and may suggest one of them.
pub fn from_table_also<T: DeserializeOwned>(
    table: &toml::Table,
    prefix: &str,
    origin_of: &dyn Fn(&str) -> String,
    also: AlsoKeys,
) -> InputResult<T> {
    T::deserialize(ValueDe {
        value: &toml::Value::Table(table.clone()),
        path: prefix.to_string(),
    })
    .map_err(|e| {
        let key = e.key.unwrap_or_else(|| prefix.to_string());
        let message = match e.unknown {
            Some((field, accepted)) => unknown_key(&field, accepted, also),
            None => e.message,
        };
        InputError::with_key(origin_of(&key), key, message)
    })
}

/// [`from_table`] for one value.
pub fn from_value<T: DeserializeOwned>(
    value: &toml::Value,
    key: &str,
    origin: &str,
) -> InputResult<T> {
    T::deserialize(ValueDe {
        value,
        path: key.to_string(),
    })
    .map_err(|e| InputError::with_key(origin, e.key.unwrap_or_else(|| key.to_string()), e.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "kebab-case")]
    enum Mode {
        Process,
        Thread,
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Keys {
        groups: Option<u32>,
        mode: Option<Mode>,
        ratio: Option<f64>,
        list: Option<Vec<i8>>,
    }

    fn parse(text: &str) -> InputResult<Keys> {
        let t: toml::Table = text.parse().unwrap();
        from_table(&t, "workload", &|_| "s.toml".to_string())
    }

    #[test]
    fn a_ranged_key_states_its_own_range() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Ranged {
            tasks: Option<UInt<1, 100>>,
        }
        let parse = |text: &str| -> InputResult<Ranged> {
            let t: toml::Table = text.parse().unwrap();
            from_table(&t, "workload", &|_| "s.toml".to_string())
        };
        assert_eq!(parse("tasks = 100").unwrap().tasks, Some(UInt(100)));
        for (text, got) in [
            ("tasks = 'x'", "string \"x\""),
            ("tasks = 0", "integer 0"),
            ("tasks = 101", "integer 101"),
            ("tasks = -5", "integer -5"),
            ("tasks = 1.5", "float 1.5"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.key.as_deref(), Some("workload.tasks"), "{text}");
            assert_eq!(
                e.message,
                format!("got {got}; accepted: an integer from 1 to 100"),
                "{text}"
            );
        }
    }

    #[test]
    fn typed_values_and_one_wording() {
        let k = parse("groups = 4\nmode = 'thread'\nratio = 1\nlist = [1, -2]").unwrap();
        assert_eq!(k.groups, Some(4));
        assert_eq!(k.mode, Some(Mode::Thread));
        assert_eq!(k.ratio, Some(1.0));
        assert_eq!(k.list, Some(vec![1, -2]));
        let e = parse("groups = 'x'").unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.toml: workload.groups: got string \"x\"; accepted: an integer from 0 to 4294967295"
        );
        let e = parse("groups = -1").unwrap_err();
        assert_eq!(
            e.message,
            "got integer -1; accepted: an integer from 0 to 4294967295"
        );
        let e = parse("grups = 1").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("workload.grups"));
        assert_eq!(
            e.message,
            "unknown key (did you mean groups?); accepted: groups, mode, ratio, list"
        );
        let e = parse("mode = 'thraed'").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("workload.mode"));
        assert_eq!(
            e.message,
            "unknown value 'thraed' (did you mean thread?); accepted: process, thread"
        );
        let e = parse("mode = 3").unwrap_err();
        assert_eq!(e.message, "got integer 3; accepted: one of process, thread");
        let e = parse("list = [1, 200]").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("workload.list[1]"));
        let e = parse("ratio = true").unwrap_err();
        assert_eq!(e.message, "got boolean true; accepted: a number");
    }
}
