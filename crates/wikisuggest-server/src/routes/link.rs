//! Operations 1 and 2: link recommendations for a stored page (GET) or for wikitext sent in
//! the body (POST). Order of checks as in the service: wiki, revision,
//! dataset (404), page or body, then the remaining parameters.

use axum::body::Bytes;
use axum::extract::rejection::PathRejection;
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use crate::error::ApiError;
use crate::link::params::{LinkQuery, normalise_title, py_int};
use crate::link::slots::AppKey;
use crate::link::{BackendError, LinkRequest, project_domain_pairs, wiki_id};
use crate::reply::value_response;
use crate::state::SharedState;

type LinkPath = Result<Path<(String, String, String)>, PathRejection>;

/// Where the wikitext comes from.
enum Source {
    Stored,
    Body(Bytes),
}

/// The app the gateway counted the request against (absent only if the route is driven
/// without the gateway).
type App = Option<Extension<AppKey>>;

pub async fn get_links(
    State(state): State<SharedState>,
    app: App,
    path: LinkPath,
    RawQuery(raw): RawQuery,
) -> Result<Response, ApiError> {
    let query = LinkQuery::parse(raw.as_deref().unwrap_or_default());
    links(state, app, path, query, Source::Stored).await
}

pub async fn post_links(
    State(state): State<SharedState>,
    app: App,
    path: LinkPath,
    RawQuery(raw): RawQuery,
    body: Bytes,
) -> Result<Response, ApiError> {
    let query = LinkQuery::parse(raw.as_deref().unwrap_or_default());
    links(state, app, path, query, Source::Body(body)).await
}

async fn links(
    state: SharedState,
    app: App,
    path: LinkPath,
    query: LinkQuery,
    source: Source,
) -> Result<Response, ApiError> {
    let Path((project, domain, raw_title)) =
        path.map_err(|e| ApiError::bad_request(format!("Invalid path: {}", e.body_text())))?;
    let wiki = wiki_id(&project, &domain);
    if !state.wikis.contains(&wiki) {
        log::warn!("no dataset for {wiki}");
        return Err(ApiError::Message {
            // The contract's 404 (production answers 400).
            status: StatusCode::NOT_FOUND,
            body: json!({
                "message": format!("Unable to process request for {project}/{domain}"),
                "valid_project_domain_pairs": project_domain_pairs(&state.wikis),
            }),
        });
    }
    let page_title = normalise_title(&raw_title).map_err(ApiError::bad_request)?;
    let mut options = query.options(&domain).map_err(ApiError::bad_request)?;
    let (wikitext, revid, pageid, body_sections) = match source {
        Source::Stored => {
            // A value that is not a revision id would otherwise fetch the latest revision
            // silently (Werkzeug's `type=int` falls back to the default).
            let revision = query.revision().map_err(ApiError::bad_request)?;
            let not_found = || ApiError::Message {
                status: StatusCode::NOT_FOUND,
                body: json!({ "message": format!("Page not found: {raw_title}") }),
            };
            if let Some(api) = state.wiki_apis.get(&wiki) {
                // The wiki is asked for the title the engine reads, which passed MediaWiki's
                // title rules above.
                let page = crate::link::fetch::page(api, &page_title, revision)
                    .await?
                    .ok_or_else(not_found)?;
                (page.wikitext, page.revid, json!(page.pageid), None)
            } else {
                let store = state
                    .pages
                    .as_ref()
                    .filter(|s| s.serves(&wiki))
                    .ok_or_else(not_found)?;
                let page = if revision != 0 {
                    store.revision(revision)
                } else {
                    store.latest(&page_title)
                };
                let page = page.ok_or_else(not_found)?;
                (page.wikitext.clone(), page.revid, json!(page.pageid), None)
            }
        }
        Source::Body(bytes) => parse_body(&bytes)?,
    };
    // The body's list wins whenever the key is present, even if empty or null.
    if let Some(sections) = body_sections {
        options.sections_to_exclude = sections;
    }
    let request = LinkRequest {
        page_title,
        wikitext,
        revid,
        pageid: pageid.clone(),
        options,
    };
    let started = std::time::Instant::now();
    // Waiting for a slot is where a request dropped early costs nothing; the slot then
    // stays with the engine work until it has stopped. When this handler is dropped while
    // its page is computed (client gone, request timed out), the engine is told to stop:
    // it would otherwise run on for nobody.
    let app = app.map_or_else(|| AppKey::new("unknown"), |Extension(app)| app);
    let slot = state.link_slots.acquire(app).await;
    let (result, wiki, request) = state.engine_threads.compute(slot, wiki, request).await;
    let set = result.map_err(|e| match e {
        BackendError::BadInput(message) => ApiError::bad_request(message),
        BackendError::Failed(message) => ApiError::Internal(message),
        BackendError::Unavailable(message) => ApiError::Unavailable {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message,
            retry_after: Some(1),
        },
    })?;
    let mut value = serde_json::to_value(&set).map_err(|e| ApiError::Internal(e.to_string()))?;
    if let Some(map) = value.as_object_mut() {
        map.insert("pageid".into(), pageid);
    }
    // The article's length in characters is a pass over the whole page: counted only
    // for a line that is written.
    if log::log_enabled!(log::Level::Info) {
        log::info!(
            "wiki={wiki} page_title={:?} revid={} article_length={} threshold={} \
             max_recommendations={} suggested_links_count={} execution_time_ms={}",
            request.page_title,
            request.revid,
            request.wikitext.chars().count(),
            request.options.threshold,
            request.options.max_recommendations,
            set.links.len(),
            started.elapsed().as_millis()
        );
    }
    Ok(value_response(StatusCode::OK, &value))
}

type BodyFields = (String, i64, Value, Option<Vec<String>>);

/// The POST body: `wikitext` (string), `revid` (integer, or a string or float holding one),
/// `pageid` (echoed whatever it is), optional `sections_to_exclude` (list of strings; null
/// means none).
fn parse_body(bytes: &[u8]) -> Result<BodyFields, ApiError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("The body is not valid JSON: {e}")))?;
    let falsy = match &value {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    };
    if falsy {
        return Err(ApiError::bad_request("No data to validate"));
    }
    let Value::Object(mut map) = value else {
        return Err(ApiError::bad_request("The body must be a JSON object"));
    };
    let missing = |name: &str| ApiError::bad_request(format!("Missing body field: {name}"));
    let wikitext = match map.remove("wikitext") {
        Some(Value::String(text)) => text,
        Some(_) => return Err(ApiError::bad_request("wikitext must be a string")),
        None => return Err(missing("wikitext")),
    };
    let revid = match map.remove("revid") {
        None => return Err(missing("revid")),
        Some(Value::Number(n)) => n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9e15)
                .map(|f| f as i64)
        }),
        Some(Value::String(s)) => py_int(&s),
        Some(_) => None,
    }
    .ok_or_else(|| ApiError::bad_request("revid must be an integer"))?;
    let pageid = map.remove("pageid").ok_or_else(|| missing("pageid"))?;
    let sections = match map.remove("sections_to_exclude") {
        None => None,
        Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(items)) => Some(
            items
                .into_iter()
                .map(|item| match item {
                    Value::String(s) => Ok(s),
                    _ => Err(ApiError::bad_request(
                        "sections_to_exclude must be a list of strings",
                    )),
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => {
            return Err(ApiError::bad_request(
                "sections_to_exclude must be a list of strings",
            ));
        }
    };
    Ok((wikitext, revid, pageid, sections))
}
