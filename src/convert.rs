//! Results to Python objects.
//!
//! Records become the frozen dataclasses of `wikisuggest.records`, built here directly: a
//! dataclass `__init__` runs Python code per field, which for a 15-link response cost more than
//! the whole HTTP exchange. We allocate each instance as `object.__new__` does and fill its slots
//! through the descriptors behind `object.__setattr__` (the route a frozen dataclass's own
//! `__init__` takes), so the result is indistinguishable from one built by `from_dict`.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyString, PyTuple, PyType};
use pyo3::{IntoPyObjectExt, intern};
use serde_json::{Map, Number, Value};
use wikisuggest_core::client::Fetched;
use wikisuggest_core::models::{
    DatasetChecksums, LinkRecommendation, LinkRecommendationSet, Meta, PageCollectionMetadata,
    TranslationRecommendation,
};

pub(crate) struct Builders {
    empty_extra: Py<PyAny>,
    pub(crate) link_set: RecordClass,
    pub(crate) link: RecordClass,
    meta: RecordClass,
    checksums: RecordClass,
    translation: RecordClass,
    collection: RecordClass,
}

static BUILDERS: PyOnceLock<Builders> = PyOnceLock::new();

pub(crate) fn builders(py: Python<'_>) -> PyResult<&Builders> {
    BUILDERS.get_or_try_init(py, || {
        let models = py.import("wikisuggest.records")?;
        let class = |name: &str| RecordClass::new(models.getattr(name)?.cast_into::<PyType>()?);
        Ok(Builders {
            empty_extra: models.getattr("EMPTY_EXTRA")?.unbind(),
            link_set: class("LinkRecommendationSet")?,
            link: class("LinkRecommendation")?,
            meta: class("Meta")?,
            checksums: class("DatasetChecksums")?,
            translation: class("TranslationRecommendation")?,
            collection: class("PageCollectionMetadata")?,
        })
    })
}

/// A record class (a slotted dataclass) and its fields' setters, looked up once.
///
/// `object.__setattr__` looks each field's descriptor up by name along the class's MRO and
/// then calls the descriptor's setter; a record's fields are known in advance, so the
/// descriptors are found here once (the same look-up, by the same MRO) and filling a record
/// calls each setter directly. The classes are the package's own and are not changed after
/// import.
pub(crate) struct RecordClass {
    class: Py<PyType>,
    fields: Vec<FieldSetter>,
}

/// A field's name (interned, as the names passed to [`RecordClass::set`] are) and the data
/// descriptor that `object.__setattr__` would find for it.
struct FieldSetter {
    name: Py<PyString>,
    descriptor: Py<PyAny>,
    set: ffi::descrsetfunc,
}

impl RecordClass {
    /// `class`'s fields (`__slots__` along its MRO) with their descriptors' setters.
    pub(crate) fn new(class: Bound<'_, PyType>) -> PyResult<Self> {
        let py = class.py();
        let mro = class.getattr(intern!(py, "__mro__"))?;
        let dicts = mro
            .try_iter()?
            .map(|k| k?.getattr(intern!(py, "__dict__")))
            .collect::<PyResult<Vec<_>>>()?;
        let mut fields: Vec<FieldSetter> = Vec::new();
        for dict in &dicts {
            let Some(slots) = dict.get_item(intern!(py, "__slots__")).ok() else {
                continue;
            };
            // `__slots__` may also be a single name.
            let names: Vec<String> = match slots.extract::<String>() {
                Ok(one) => vec![one],
                Err(_) => slots
                    .try_iter()?
                    .map(|name| name?.extract::<String>())
                    .collect::<PyResult<_>>()?,
            };
            for name in names {
                let name = PyString::intern(py, &name);
                if fields.iter().any(|f| f.name.as_ptr() == name.as_ptr()) {
                    continue;
                }
                // What `object.__setattr__` finds: the first class along the MRO that
                // defines the name.
                let Some(descriptor) = dicts.iter().find_map(|d| d.get_item(&name).ok()) else {
                    continue;
                };
                // SAFETY: a live type object and the GIL held; `PyType_GetSlot` accepts
                // static types from Python 3.10 on (the oldest the extension supports) and
                // returns NULL for a type without the slot, which `transmute` turns into
                // `None` (a nullable function pointer).
                let set: Option<ffi::descrsetfunc> = unsafe {
                    std::mem::transmute(ffi::PyType_GetSlot(
                        descriptor.get_type().as_type_ptr(),
                        ffi::Py_tp_descr_set,
                    ))
                };
                if let Some(set) = set {
                    fields.push(FieldSetter {
                        name: name.unbind(),
                        descriptor: descriptor.unbind(),
                        set,
                    });
                }
            }
        }
        Ok(Self {
            class: class.unbind(),
            fields,
        })
    }

    /// `object.__setattr__(obj, name, value)` without a Python-level call or a look-up by
    /// name: the field's descriptor sets it (a name not found takes the generic route).
    fn set(
        &self,
        obj: &Bound<'_, PyAny>,
        name: &Bound<'_, PyString>,
        value: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let Some(field) = self
            .fields
            .iter()
            .find(|f| f.name.as_ptr() == name.as_ptr())
        else {
            return set_field(obj, name, value);
        };
        // SAFETY: live objects and the GIL held; a descriptor's setter borrows its arguments
        // and returns -1 with an exception set on failure.
        let status =
            unsafe { (field.set)(field.descriptor.as_ptr(), obj.as_ptr(), value.as_ptr()) };
        if status == 0 {
            Ok(())
        } else {
            Err(PyErr::fetch(obj.py()))
        }
    }
}

/// An instance of `class` with the given fields set, bypassing `__init__`.
pub(crate) fn record<'py>(
    py: Python<'py>,
    b: &Builders,
    class: &RecordClass,
    fields: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
    extra: &Map<String, Value>,
) -> PyResult<Bound<'py, PyAny>> {
    let obj = instance(py, class, fields)?;
    let atomic = extra.is_empty() && none_tracked(fields.iter().map(|(_, value)| value));
    let extra = if extra.is_empty() {
        b.empty_extra.bind(py).clone()
    } else {
        pythonize::pythonize(py, extra)?
    };
    class.set(&obj, intern!(py, "extra"), &extra)?;
    if atomic {
        untrack(&obj);
    }
    Ok(obj)
}

/// [`instance`], left out of the cyclic collector when none of `fields` is tracked (a
/// record of a frozen class holding only such values cannot be part of a cycle).
pub(crate) fn atomic_instance<'py>(
    py: Python<'py>,
    class: &RecordClass,
    fields: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
) -> PyResult<Bound<'py, PyAny>> {
    let obj = instance(py, class, fields)?;
    if none_tracked(fields.iter().map(|(_, value)| value)) {
        untrack(&obj);
    }
    Ok(obj)
}

/// An instance of `class` (a slotted dataclass) with the given fields set, bypassing
/// `__init__` (see the module's comment).
fn instance<'py>(
    py: Python<'py>,
    class: &RecordClass,
    fields: &[(&Bound<'py, PyString>, Bound<'py, PyAny>)],
) -> PyResult<Bound<'py, PyAny>> {
    let obj = allocate(class.class.bind(py))?;
    for (name, value) in fields {
        class.set(&obj, name, value)?;
    }
    Ok(obj)
}

/// A tuple of `items`, left out of the cyclic collector when none of them is tracked: the
/// rule CPython applies to such a tuple at the first collection that meets it, applied at
/// once, so that the record holding it is atomic too.
pub(crate) fn tuple<'py>(
    py: Python<'py>,
    items: Vec<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let atomic = none_tracked(&items);
    let tuple = PyTuple::new(py, items)?.into_any();
    if atomic {
        untrack(&tuple);
    }
    Ok(tuple)
}

/// Whether the cyclic garbage collector follows none of `values` (it follows containers; not
/// strings, numbers, `None`, nor the records and tuples untracked here): the one test of
/// whether an immutable object holding them may be untracked.
fn none_tracked<'a, 'py: 'a>(values: impl IntoIterator<Item = &'a Bound<'py, PyAny>>) -> bool {
    values
        .into_iter()
        // SAFETY: live objects and the GIL held.
        .all(|value| unsafe { ffi::PyObject_GC_IsTracked(value.as_ptr()) } != 1)
}

/// Takes an immutable object that refers only to untracked values (a link, its checksums and
/// meta, a tuple of such links and the response holding it, a batch item of such a response)
/// off the cyclic collector's lists, as CPython does for tuples and dicts of atomic values:
/// such an object cannot be part of a reference cycle, and a batch keeps hundreds of
/// thousands of them, each of which every collection would otherwise visit. Reference
/// counting still frees it.
fn untrack(obj: &Bound<'_, PyAny>) {
    // SAFETY: a live object of a collected type (a class defined in Python, or a tuple), GIL
    // held; untracking is always allowed, and its deallocator untracks only if still tracked.
    unsafe { ffi::PyObject_GC_UnTrack(obj.as_ptr().cast()) }
}

/// `object.__new__(class)` without a Python-level call (one per record, 18 for a 15-link
/// response): `object.__new__` checks that it got no arguments and that the class is not
/// abstract, then calls the class's `tp_alloc`, which for a class defined in Python (these
/// dataclasses) is always `PyType_GenericAlloc`.
fn allocate<'py>(class: &Bound<'py, PyType>) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: `class` is a live type object and the GIL is held; `PyType_GenericAlloc` returns
    // a new reference or NULL with an exception set, which `from_owned_ptr_or_err` takes over.
    unsafe {
        let obj = ffi::PyType_GenericAlloc(class.as_type_ptr(), 0);
        Bound::from_owned_ptr_or_err(class.py(), obj)
    }
}

/// `object.__setattr__(obj, name, value)` without a Python-level call: the generic setter
/// stores into the slot that the class's member descriptor names, bypassing the frozen
/// class's `__setattr__` exactly as `object.__setattr__` does. Calling `object.__setattr__`
/// built an argument tuple per field, which dominated the conversion of a response.
fn set_field(
    obj: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: the three pointers come from live `Bound`s, so they are valid and the GIL is
    // held; `PyObject_GenericSetAttr` borrows its arguments and steals no reference.
    let status =
        unsafe { ffi::PyObject_GenericSetAttr(obj.as_ptr(), name.as_ptr(), value.as_ptr()) };
    if status == 0 {
        Ok(())
    } else {
        Err(PyErr::fetch(obj.py()))
    }
}

fn opt<'py, T: IntoPyObjectExt<'py>>(py: Python<'py>, value: T) -> PyResult<Bound<'py, PyAny>> {
    value.into_bound_py_any(py)
}

fn number<'py>(py: Python<'py>, n: &Option<Number>) -> PyResult<Bound<'py, PyAny>> {
    match n {
        None => Ok(py.None().into_bound(py)),
        Some(n) => match n.as_i64() {
            Some(i) => opt(py, i),
            None => opt(py, n.as_f64()),
        },
    }
}

fn link<'py>(py: Python<'py>, b: &Builders, l: &LinkRecommendation) -> PyResult<Bound<'py, PyAny>> {
    record(
        py,
        b,
        &b.link,
        &[
            (intern!(py, "link_text"), opt(py, &l.link_text)?),
            (intern!(py, "link_target"), opt(py, &l.link_target)?),
            (intern!(py, "score"), opt(py, l.score)?),
            (intern!(py, "wikitext_offset"), opt(py, l.wikitext_offset)?),
            (intern!(py, "context_before"), opt(py, &l.context_before)?),
            (intern!(py, "context_after"), opt(py, &l.context_after)?),
            (intern!(py, "link_index"), opt(py, l.link_index)?),
            (intern!(py, "match_index"), opt(py, l.match_index)?),
        ],
        &l.extra,
    )
}

fn checksums<'py>(
    py: Python<'py>,
    b: &Builders,
    c: &DatasetChecksums,
) -> PyResult<Bound<'py, PyAny>> {
    record(
        py,
        b,
        &b.checksums,
        &[
            (intern!(py, "anchors"), opt(py, &c.anchors)?),
            (intern!(py, "model"), opt(py, &c.model)?),
            (intern!(py, "pageids"), opt(py, &c.pageids)?),
            (intern!(py, "redirects"), opt(py, &c.redirects)?),
            (intern!(py, "w2vfiltered"), opt(py, &c.w2vfiltered)?),
        ],
        &c.extra,
    )
}

/// The `Meta` record built last, with the value it was built from: the responses of one
/// dataset all carry the same meta, and a batch keeps thousands of them. Records are frozen,
/// so results can share one (only when it holds no `extra` mapping, which could be changed).
static LAST_META: std::sync::Mutex<Option<(Meta, Py<PyAny>)>> = std::sync::Mutex::new(None);

pub(crate) fn meta<'py>(py: Python<'py>, b: &Builders, m: &Meta) -> PyResult<Bound<'py, PyAny>> {
    let shareable = m.extra.is_empty()
        && m.dataset_checksums
            .as_ref()
            .is_none_or(|c| c.extra.is_empty());
    if !shareable {
        return new_meta(py, b, m);
    }
    if let Ok(last) = LAST_META.lock()
        && let Some((value, object)) = last.as_ref()
        && value == m
    {
        return Ok(object.bind(py).clone());
    }
    let object = new_meta(py, b, m)?;
    if let Ok(mut last) = LAST_META.lock() {
        *last = Some((m.clone(), object.clone().unbind()));
    }
    Ok(object)
}

fn new_meta<'py>(py: Python<'py>, b: &Builders, m: &Meta) -> PyResult<Bound<'py, PyAny>> {
    let sums = match &m.dataset_checksums {
        Some(c) => checksums(py, b, c)?,
        None => py.None().into_bound(py),
    };
    record(
        py,
        b,
        &b.meta,
        &[
            (
                intern!(py, "application_version"),
                opt(py, &m.application_version)?,
            ),
            (intern!(py, "dataset_checksums"), sums),
            (intern!(py, "format_version"), opt(py, m.format_version)?),
        ],
        &m.extra,
    )
}

/// `LinkRecommendation` records of `links`, outside any set.
pub(crate) fn links<'py>(
    py: Python<'py>,
    links: &[LinkRecommendation],
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let b = builders(py)?;
    links.iter().map(|l| link(py, b, l)).collect()
}

pub fn link_set<'py>(py: Python<'py>, s: &LinkRecommendationSet) -> PyResult<Bound<'py, PyAny>> {
    let b = builders(py)?;
    let links = s
        .links
        .iter()
        .map(|l| link(py, b, l))
        .collect::<PyResult<Vec<_>>>()?;
    let meta = match &s.meta {
        Some(m) => meta(py, b, m)?,
        None => py.None().into_bound(py),
    };
    record(
        py,
        b,
        &b.link_set,
        &[
            (intern!(py, "links"), tuple(py, links)?),
            (intern!(py, "links_count"), opt(py, s.links_count)?),
            (intern!(py, "meta"), meta),
            (intern!(py, "page_title"), opt(py, &s.page_title)?),
            (intern!(py, "pageid"), opt(py, s.pageid)?),
            (intern!(py, "revid"), opt(py, s.revid)?),
        ],
        &s.extra,
    )
}

fn collection<'py>(
    py: Python<'py>,
    b: &Builders,
    c: &Option<PageCollectionMetadata>,
) -> PyResult<Bound<'py, PyAny>> {
    let Some(c) = c else {
        return Ok(py.None().into_bound(py));
    };
    let by_language = match &c.articles_by_language_count {
        Some(counts) => pythonize::pythonize(py, counts)?,
        None => py.None().into_bound(py),
    };
    record(
        py,
        b,
        &b.collection,
        &[
            (intern!(py, "name"), opt(py, &c.name)?),
            (intern!(py, "description"), opt(py, &c.description)?),
            (intern!(py, "end_date"), opt(py, &c.end_date)?),
            (intern!(py, "articles_count"), opt(py, c.articles_count)?),
            (intern!(py, "articles_by_language_count"), by_language),
        ],
        &c.extra,
    )
}

pub fn translations<'py>(
    py: Python<'py>,
    items: &[TranslationRecommendation],
) -> PyResult<Bound<'py, PyAny>> {
    let b = builders(py)?;
    let objects = items
        .iter()
        .map(|t| {
            record(
                py,
                b,
                &b.translation,
                &[
                    (intern!(py, "title"), opt(py, &t.title)?),
                    (intern!(py, "pageviews"), opt(py, t.pageviews)?),
                    (intern!(py, "wikidata_id"), opt(py, &t.wikidata_id)?),
                    (intern!(py, "rank"), number(py, &t.rank)?),
                    (intern!(py, "langlinks_count"), opt(py, t.langlinks_count)?),
                    (intern!(py, "size"), opt(py, t.size)?),
                    (
                        intern!(py, "lead_section_size"),
                        opt(py, t.lead_section_size)?,
                    ),
                    (intern!(py, "collection"), collection(py, b, &t.collection)?),
                ],
                &t.extra,
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, objects)?.into_any())
}

/// A page of the local translation engine: `{items, continue_offset, continue_seed}`, the
/// items as records.
pub fn translation_page<'py>(
    py: Python<'py>,
    page: &wikisuggest_core::models::TranslationPage,
) -> PyResult<Bound<'py, PyAny>> {
    let out = pyo3::types::PyDict::new(py);
    out.set_item(intern!(py, "items"), translations(py, &page.items)?)?;
    out.set_item(intern!(py, "continue_offset"), page.continue_offset)?;
    out.set_item(intern!(py, "continue_seed"), page.continue_seed)?;
    Ok(out.into_any())
}

pub fn fetched<'py>(py: Python<'py>, value: &Fetched) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Fetched::LinkRecommendationSet(s) => link_set(py, s),
        Fetched::TranslationRecommendations(items) => translations(py, items),
        Fetched::Raw(value) => Ok(pythonize::pythonize(py, value)?),
    }
}
