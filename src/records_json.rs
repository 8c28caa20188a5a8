//! A link-recommendation body decoded straight into its Python records, in one pass.
//!
//! The general route decodes a body into the core's records (a `String` allocated per text
//! field) and then copies every field into Python. For the shape every deployment sends —
//! the fields the contract lists, each once, nothing else — this decoder builds the records
//! while it parses, with the same serde impls for every typed value. Anything else (an extra
//! field, a repeated key, a type the general route coerces or refuses) makes it give up, and
//! the general route decodes the body: its results and errors stay the only definition.

use std::cell::RefCell;
use std::fmt;

use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::{IntoPyObjectExt, intern};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Map;
use wikisuggest_core::Error;
use wikisuggest_core::client::{ResponseKind, Undecoded};
use wikisuggest_core::models::{Meta, lenient_int};

use crate::convert::{Builders, builders, meta, record};

/// The records of `body`, or `None` when it is not of the common shape (or not JSON at all):
/// the caller then decodes it the general way, which also reports what is wrong with it.
pub fn link_set<'py>(py: Python<'py>, body: &[u8]) -> Option<PyResult<Bound<'py, PyAny>>> {
    let text = std::str::from_utf8(body).ok()?;
    let b = match builders(py) {
        Ok(b) => b,
        Err(err) => return Some(Err(err)),
    };
    let ctx = Ctx {
        py,
        b,
        failed: RefCell::new(None),
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = SetSeed(&ctx)
        .deserialize(&mut de)
        .and_then(|set| de.end().map(|()| set));
    if let Some(err) = ctx.failed.into_inner() {
        return Some(Err(err));
    }
    parsed.ok().map(Ok)
}

struct Ctx<'a, 'py> {
    py: Python<'py>,
    b: &'a Builders,
    /// A Python error met while building (memory): reported as is, not as a shape mismatch.
    failed: RefCell<Option<PyErr>>,
}

impl<'py> Ctx<'_, 'py> {
    /// A Python result as a serde one, keeping the Python error to report.
    fn py<T, E: de::Error>(&self, result: PyResult<T>) -> Result<T, E> {
        result.map_err(|err| {
            *self.failed.borrow_mut() = Some(err);
            E::custom("python error")
        })
    }

    fn none(&self) -> Bound<'py, PyAny> {
        self.py.None().into_bound(self.py)
    }
}

/// Not the common shape: the general route takes over.
fn give_up<E: de::Error>() -> E {
    E::custom("not the common shape")
}

/// Which field of a record a key names, if it is one the fast route knows.
struct Key<'k>(&'k [&'static str]);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<usize, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Key<'_> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<usize, E> {
        self.0
            .iter()
            .position(|name| *name == v)
            .ok_or_else(give_up)
    }
}

/// The fields of a record, each value seen once at most.
struct Fields<'py, const N: usize>([Option<Bound<'py, PyAny>>; N]);

impl<'py, const N: usize> Fields<'py, N> {
    fn new() -> Self {
        Self(std::array::from_fn(|_| None))
    }

    fn set<E: de::Error>(&mut self, index: usize, value: Bound<'py, PyAny>) -> Result<(), E> {
        match self.0.get_mut(index) {
            Some(slot @ None) => {
                *slot = Some(value);
                Ok(())
            }
            _ => Err(give_up()),
        }
    }

    fn take(&mut self, index: usize, ctx: &Ctx<'_, 'py>) -> Bound<'py, PyAny> {
        self.0
            .get_mut(index)
            .and_then(Option::take)
            .unwrap_or_else(|| ctx.none())
    }

    fn has(&self, index: usize) -> bool {
        self.0.get(index).is_some_and(Option::is_some)
    }
}

/// A JSON string as a Python `str` (`String`'s rules: any other value is refused).
struct Str<'c, 'a, 'py>(&'c Ctx<'a, 'py>);

impl<'de, 'py> DeserializeSeed<'de> for Str<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'py> Visitor<'_> for Str<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(PyString::new(self.0.py, v).into_any())
    }
}

/// `null` as `None`, anything else as `T` (`Option<T>`'s rules).
struct Opt<S>(S);

impl<'de, 'py, S: DeserializeSeed<'de, Value = Bound<'py, PyAny>> + WithCtx<'py>>
    DeserializeSeed<'de> for Opt<S>
{
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de, 'py, S: DeserializeSeed<'de, Value = Bound<'py, PyAny>> + WithCtx<'py>> Visitor<'de>
    for Opt<S>
{
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an optional value")
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.none())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.0.none())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(d)
    }
}

/// A seed that can make Python's `None`.
trait WithCtx<'py> {
    fn none(&self) -> Bound<'py, PyAny>;
}

impl<'py> WithCtx<'py> for Str<'_, '_, 'py> {
    fn none(&self) -> Bound<'py, PyAny> {
        self.0.none()
    }
}

/// An optional integer or float, decoded by `T`'s own serde impl, as a Python number.
fn number<'de, 'py, T, M>(ctx: &Ctx<'_, 'py>, map: &mut M) -> Result<Bound<'py, PyAny>, M::Error>
where
    T: de::Deserialize<'de> + IntoPyObjectExt<'py>,
    M: MapAccess<'de>,
{
    let value = map.next_value::<Option<T>>()?;
    ctx.py(value.into_bound_py_any(ctx.py))
}

const LINK_FIELDS: [&str; 8] = [
    "link_text",
    "link_target",
    "score",
    "wikitext_offset",
    "context_before",
    "context_after",
    "link_index",
    "match_index",
];

/// One link record.
struct LinkSeed<'c, 'a, 'py>(&'c Ctx<'a, 'py>);

impl<'de, 'py> DeserializeSeed<'de> for LinkSeed<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, 'py> Visitor<'de> for LinkSeed<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a link")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let ctx = self.0;
        let mut fields = Fields::<8>::new();
        while let Some(index) = map.next_key_seed(Key(&LINK_FIELDS))? {
            let value = match index {
                0 | 1 => map.next_value_seed(Str(ctx))?,
                2 => number::<f64, M>(ctx, &mut map)?,
                3 | 6 | 7 => number::<i64, M>(ctx, &mut map)?,
                _ => map.next_value_seed(Opt(Str(ctx)))?,
            };
            fields.set(index, value)?;
        }
        // The two required fields; the general route reports their absence.
        if !fields.has(0) || !fields.has(1) {
            return Err(give_up());
        }
        let py = ctx.py;
        let values = [
            (intern!(py, "link_text"), fields.take(0, ctx)),
            (intern!(py, "link_target"), fields.take(1, ctx)),
            (intern!(py, "score"), fields.take(2, ctx)),
            (intern!(py, "wikitext_offset"), fields.take(3, ctx)),
            (intern!(py, "context_before"), fields.take(4, ctx)),
            (intern!(py, "context_after"), fields.take(5, ctx)),
            (intern!(py, "link_index"), fields.take(6, ctx)),
            (intern!(py, "match_index"), fields.take(7, ctx)),
        ];
        ctx.py(record(py, ctx.b, &ctx.b.link, &values, &Map::new()))
    }
}

/// The `links` array, as the tuple a set holds.
struct LinksSeed<'c, 'a, 'py>(&'c Ctx<'a, 'py>);

impl<'de, 'py> DeserializeSeed<'de> for LinksSeed<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, 'py> Visitor<'de> for LinksSeed<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of links")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
        let mut links = Vec::with_capacity(seq.size_hint().unwrap_or(16));
        while let Some(link) = seq.next_element_seed(LinkSeed(self.0))? {
            links.push(link);
        }
        self.0.py(crate::convert::tuple(self.0.py, links))
    }
}

/// An integer field read the lenient way (`12`, `12.0` or `"12"`), as the general route does.
struct Lenient<'c, 'a, 'py>(&'c Ctx<'a, 'py>);

impl<'de, 'py> DeserializeSeed<'de> for Lenient<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let value = lenient_int(d)?;
        self.0.py(value.into_bound_py_any(self.0.py))
    }
}

const SET_FIELDS: [&str; 6] = [
    "links",
    "links_count",
    "meta",
    "page_title",
    "pageid",
    "revid",
];

/// The whole response.
struct SetSeed<'c, 'a, 'py>(&'c Ctx<'a, 'py>);

impl<'de, 'py> DeserializeSeed<'de> for SetSeed<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, 'py> Visitor<'de> for SetSeed<'_, '_, 'py> {
    type Value = Bound<'py, PyAny>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("link recommendations")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let ctx = self.0;
        let mut fields = Fields::<6>::new();
        while let Some(index) = map.next_key_seed(Key(&SET_FIELDS))? {
            let value = match index {
                0 => map.next_value_seed(LinksSeed(ctx))?,
                1 => number::<i64, M>(ctx, &mut map)?,
                2 => match map.next_value::<Option<Meta>>()? {
                    Some(m) => ctx.py(meta(ctx.py, ctx.b, &m))?,
                    None => ctx.none(),
                },
                3 => map.next_value_seed(Opt(Str(ctx)))?,
                _ => map.next_value_seed(Lenient(ctx))?,
            };
            fields.set(index, value)?;
        }
        if !fields.has(0) {
            return Err(give_up());
        }
        let py = ctx.py;
        let values = [
            (intern!(py, "links"), fields.take(0, ctx)),
            (intern!(py, "links_count"), fields.take(1, ctx)),
            (intern!(py, "meta"), fields.take(2, ctx)),
            (intern!(py, "page_title"), fields.take(3, ctx)),
            (intern!(py, "pageid"), fields.take(4, ctx)),
            (intern!(py, "revid"), fields.take(5, ctx)),
        ];
        ctx.py(record(py, ctx.b, &ctx.b.link_set, &values, &Map::new()))
    }
}

/// A response's result as Python sees it: a link set of the common shape straight from its
/// body, anything else decoded first. `Ok(Err(_))` when the body does not decode as its kind
/// (that request's error); `Err` only for a failure of Python itself.
pub fn undecoded<'py>(
    py: Python<'py>,
    u: &Undecoded,
) -> PyResult<Result<Bound<'py, PyAny>, Error>> {
    if u.kind == ResponseKind::LinkRecommendationSet
        && !u.raw
        && let Some(set) = link_set(py, &u.response.body)
    {
        return set.map(Ok);
    }
    match u.decode() {
        Ok(value) => crate::convert::fetched(py, &value).map(Ok),
        Err(error) => Ok(Err(error)),
    }
}
