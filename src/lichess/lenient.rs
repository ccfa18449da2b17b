//! Lenient reading of lichess JSON: what the bot needs is strict, everything else bends.
//!
//! lichess adds fields, map entries and enum values every few months, and has sent entries of
//! unexpected shapes (`perfs.storm` is `{runs, score}`, not a rating). A derived `Deserialize`
//! fails the whole document on the first such surprise, so one odd rating entry made the bot
//! exit at start-up. The models in [`crate::lichess::model`] are therefore read through
//! [`Fields`], field by field, with one of three rules:
//!
//! - [`Fields::required`]: the bot cannot act without it (a game id, the move list, the
//!   clocks...). Missing, null or unreadable is an error naming the path of the field
//!   (`gameFull.state.wtime is missing`), which the caller reports with its endpoint.
//! - [`Fields::lenient`] / [`Fields::optional`]: anything else. Missing or null gives the
//!   default (`None`); a value of the wrong type gives the default too and is logged at debug
//!   level with the field's name, never an error.
//! - Unknown fields are never looked at.
//!
//! Values are coerced where the meaning is unambiguous ([`FromJson`]): a number where a
//! string was expected becomes its decimal text, a numeric string where a number was expected
//! becomes the number, `"true"`/`"false"` become booleans. Map and list entries that cannot be
//! read are dropped one by one (logged at debug), keeping the others.

use std::collections::HashMap;
use std::fmt;

use serde_json::{Map, Value};

/// A part of a JSON document the bot needs but cannot read: where, and what was wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// Dotted path of the field (`gameFull.state.wtime`); empty for the document itself.
    pub path: String,
    /// What was wrong (`is missing`, `is not a whole number: "abc"`).
    pub problem: String,
}

impl Unreadable {
    fn new(problem: impl Into<String>) -> Self {
        Self {
            path: String::new(),
            problem: problem.into(),
        }
    }

    /// A needed field that is absent.
    pub fn missing(name: &str) -> Self {
        Self::new("is missing").within(name)
    }

    /// The same error one level down: `name` is prepended to the path (an empty name adds
    /// nothing).
    pub fn within(mut self, name: &str) -> Self {
        self.path = if name.is_empty() {
            self.path
        } else if self.path.is_empty() {
            name.to_owned()
        } else {
            format!("{name}.{}", self.path)
        };
        self
    }
}

impl fmt::Display for Unreadable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.problem)
        } else {
            write!(f, "field `{}` {}", self.path, self.problem)
        }
    }
}

impl std::error::Error for Unreadable {}

/// A short description of a JSON value for error messages (never the whole value).
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => {
            let cut: String = s.chars().take(40).collect();
            if cut.len() < s.len() {
                format!("{cut:?}...")
            } else {
                format!("{cut:?}")
            }
        }
        Value::Array(a) => format!("an array of {}", a.len()),
        Value::Object(_) => "an object".into(),
    }
}

fn wrong(expected: &str, v: &Value) -> Unreadable {
    Unreadable::new(format!("is not {expected}: {}", describe(v)))
}

/// Conversion from a JSON value with lichess-tolerant coercions.
pub trait FromJson: Sized {
    /// Reads `v`, or says why it cannot.
    fn from_json(v: Value) -> Result<Self, Unreadable>;
}

impl FromJson for Value {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        Ok(v)
    }
}

impl FromJson for String {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        match v {
            Value::String(s) => Ok(s),
            Value::Number(n) => Ok(n.to_string()),
            Value::Bool(b) => Ok(b.to_string()),
            v => Err(wrong("a string", &v)),
        }
    }
}

impl FromJson for bool {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        match &v {
            Value::Bool(b) => Ok(*b),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
            Value::Number(n) if n.as_u64() == Some(1) => Ok(true),
            Value::Number(n) if n.as_u64() == Some(0) => Ok(false),
            _ => Err(wrong("a boolean", &v)),
        }
    }
}

/// A whole number from a JSON number (integral floats included) or a numeric string.
fn integer(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n.as_i64().map(i128::from).or_else(|| {
            n.as_u64().map(i128::from).or_else(|| {
                n.as_f64()
                    .filter(|f| f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e18)
                    .map(|f| f as i128)
            })
        }),
        Value::String(s) => {
            let t = s.trim();
            t.parse::<i128>().ok().or_else(|| {
                t.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e18)
                    .map(|f| f as i128)
            })
        }
        _ => None,
    }
}

macro_rules! integer_from_json {
    ($($t:ty),*) => {$(
        impl FromJson for $t {
            fn from_json(v: Value) -> Result<Self, Unreadable> {
                match integer(&v) {
                    Some(n) => <$t>::try_from(n).map_err(|_| {
                        Unreadable::new(format!("{n} is out of range for {}", stringify!($t)))
                    }),
                    None => Err(wrong("a whole number", &v)),
                }
            }
        }
    )*};
}

integer_from_json!(i64, u64, u32, i32);

impl<T: FromJson> FromJson for Option<T> {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        match v {
            Value::Null => Ok(None),
            v => T::from_json(v).map(Some),
        }
    }
}

/// A list whose unreadable entries are dropped (each logged at debug level).
impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let Value::Array(items) = v else {
            return Err(wrong("an array", &v));
        };
        Ok(items
            .into_iter()
            .enumerate()
            .filter_map(|(i, item)| match T::from_json(item) {
                Ok(x) => Some(x),
                Err(e) => {
                    tracing::debug!(entry = i, problem = %e, "unreadable list entry ignored");
                    None
                }
            })
            .collect())
    }
}

/// A map whose unreadable entries are dropped (each logged at debug level): `perfs` holds
/// rating objects and, for `storm`/`racer`/`streak`, objects of another shape.
impl<T: FromJson> FromJson for HashMap<String, T> {
    fn from_json(v: Value) -> Result<Self, Unreadable> {
        let Value::Object(map) = v else {
            return Err(wrong("an object", &v));
        };
        Ok(map
            .into_iter()
            .filter_map(|(k, item)| match T::from_json(item) {
                Ok(x) => Some((k, x)),
                Err(e) => {
                    tracing::debug!(entry = %k, problem = %e, "unreadable map entry ignored");
                    None
                }
            })
            .collect())
    }
}

/// The `type` of a stream line, which says what the line is: needed.
pub fn line_type(v: &Value) -> Result<String, Unreadable> {
    let Value::Object(m) = v else {
        return Err(wrong("an object", v));
    };
    match m.get("type") {
        None | Some(Value::Null) => Err(Unreadable::missing("type")),
        Some(t) => String::from_json(t.clone()).map_err(|e| e.within("type")),
    }
}

/// The fields of one JSON object, taken one by one under the rules of the module docs.
pub struct Fields {
    /// The object's name in logs (`gameState`).
    what: &'static str,
    map: Map<String, Value>,
    /// Fallbacks are warnings, not debug lines (the account read once at start-up).
    warn: bool,
}

/// Every field read is taken out of the map, so what is left when the reader is done is what
/// the bot never looked at: new lichess fields (logged at debug level, since lichess adds
/// fields often and they are harmless) and the ones it has no use for. No hand-kept list of
/// known fields is needed.
impl Drop for Fields {
    fn drop(&mut self) {
        if tracing::enabled!(tracing::Level::DEBUG) {
            for field in self.map.keys().filter(|k| *k != "type") {
                tracing::debug!(object = self.what, %field, "field not read, ignored");
            }
        }
    }
}

impl Fields {
    /// The fields of `v`, which must be an object.
    pub fn new(what: &'static str, v: Value) -> Result<Self, Unreadable> {
        match v {
            Value::Object(map) => Ok(Self {
                what,
                map,
                warn: false,
            }),
            v => Err(wrong("an object", &v)),
        }
    }

    /// Fallbacks of lenient fields are logged as warnings (for documents read once, where an
    /// unreadable part deserves the owner's attention).
    pub fn warn_on_fallback(mut self) -> Self {
        self.warn = true;
        self
    }

    /// The raw value of a field, if present.
    pub fn raw(&self, name: &str) -> Option<&Value> {
        self.map.get(name)
    }

    /// A field the bot needs: missing, null or unreadable is an error naming it.
    pub fn required<T: FromJson>(&mut self, name: &str) -> Result<T, Unreadable> {
        match self.map.remove(name) {
            None => Err(Unreadable::missing(name)),
            Some(Value::Null) => Err(Unreadable::new("is null").within(name)),
            Some(v) => T::from_json(v).map_err(|e| e.within(name)),
        }
    }

    /// A field the bot can do without: `None` when missing, null or unreadable (logged).
    pub fn optional<T: FromJson>(&mut self, name: &str) -> Option<T> {
        match self.map.remove(name) {
            None | Some(Value::Null) => None,
            Some(v) => match T::from_json(v) {
                Ok(x) => Some(x),
                Err(e) => {
                    self.fallback(name, &e);
                    None
                }
            },
        }
    }

    /// A field the bot can do without: its default when missing, null or unreadable (logged).
    pub fn lenient<T: FromJson + Default>(&mut self, name: &str) -> T {
        self.optional(name).unwrap_or_default()
    }

    fn fallback(&self, name: &str, e: &Unreadable) {
        let field = format!("{}.{}", self.what, e.clone().within(name).path);
        if self.warn {
            tracing::warn!(%field, problem = %e.problem, "unreadable field ignored");
        } else {
            tracing::debug!(%field, problem = %e.problem, "unreadable field ignored");
        }
    }
}

/// Implements `serde::Deserialize` through [`FromJson`], so that `serde_json::from_slice`
/// and the ND-JSON reader use the lenient rules; errors start with the document's name.
macro_rules! deserialize_from_json {
    ($($t:ty => $name:literal),* $(,)?) => {$(
        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <serde_json::Value as serde::Deserialize>::deserialize(d)?;
                <$t as $crate::lichess::lenient::FromJson>::from_json(v)
                    .map_err(|e| <D::Error as serde::de::Error>::custom(e.within($name)))
            }
        }
    )*};
}

pub(crate) use deserialize_from_json;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn coercions_read_what_is_unambiguous() {
        assert_eq!(String::from_json(json!(12345678)).unwrap(), "12345678");
        assert_eq!(i64::from_json(json!("171430")).unwrap(), 171_430);
        assert_eq!(i64::from_json(json!(" 42 ")).unwrap(), 42);
        assert_eq!(u64::from_json(json!(2000.0)).unwrap(), 2000);
        assert!(u32::from_json(json!(-1)).is_err());
        assert!(i64::from_json(json!("12a")).is_err());
        assert!(i64::from_json(json!(1.5)).is_err());
        assert!(bool::from_json(json!("true")).unwrap());
        assert!(!bool::from_json(json!(0)).unwrap());
        assert!(bool::from_json(json!([])).is_err());
        assert_eq!(Option::<i64>::from_json(json!(null)).unwrap(), None);
    }

    #[test]
    fn maps_and_lists_drop_only_their_bad_entries() {
        let m = HashMap::<String, i64>::from_json(json!({"a": 1, "b": "x", "c": "3"})).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m["c"], 3);
        let v = Vec::<String>::from_json(json!(["a", {}, 7])).unwrap();
        assert_eq!(v, vec!["a".to_owned(), "7".to_owned()]);
    }

    #[test]
    fn required_fields_name_their_path_and_lenient_ones_fall_back() {
        let mut f = Fields::new("thing", json!({"a": "x", "b": null, "c": [1]})).unwrap();
        assert_eq!(
            f.required::<i64>("a").unwrap_err().to_string(),
            "field `a` is not a whole number: \"x\""
        );
        assert_eq!(
            f.required::<i64>("b")
                .unwrap_err()
                .within("thing")
                .to_string(),
            "field `thing.b` is null"
        );
        assert_eq!(f.lenient::<i64>("c"), 0);
        assert_eq!(f.optional::<String>("zzz"), None);
        assert!(Fields::new("thing", json!(3)).is_err());
    }
}
