//! Route tests through the application's `Router` itself: each request is one
//! `tower::ServiceExt::oneshot` call, with no listener or socket, so the assertions are on
//! what the routes, the gateway and the fallbacks answer.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;
use wikisuggest_server::{Server, ServerConfig};

const LINKS: &str = "/service/linkrecommendation/v1/linkrecommendations";
const TRANSLATION: &str = "/service/lw/recommendation/api/v1/translation";
const BEARER: &str = "Bearer test-personal-token-0123456789";
const CLIENTS: &str = r#"
[[personal_tokens]]
token = "test-personal-token-0123456789"
name = "tester"
"#;
const PAGE: &str = "'''Anarchism''' is a political philosophy. It is [[socialism|socialist]].\n\
                    == History ==\nThe word anarchy comes from Greek.\n";

/// The app over a page, the parity datasets and a three-article translation catalog, with
/// the directory holding its files (removed on drop).
async fn app() -> (Router, TempDir) {
    let dir = TempDir::new();
    std::fs::create_dir_all(dir.0.join("pages")).unwrap();
    std::fs::write(dir.0.join("pages/Anarchism.wikitext"), PAGE).unwrap();
    std::fs::write(dir.0.join("clients.toml"), CLIENTS).unwrap();
    let translation = dir.0.join("translation");
    std::fs::create_dir_all(&translation).unwrap();
    let lines = [
        json!({"title": "Cat", "wikidata_id": "Q146", "langlinks": ["fr", "de"], "pageviews": 90,
               "topic": "Biology", "text": "domestic cat feline mammal"}),
        json!({"title": "Lion", "wikidata_id": "Q140", "langlinks": ["de"], "pageviews": 50,
               "topic": "Biology", "text": "large cat feline mammal"}),
        json!({"title": "Violin", "wikidata_id": "Q8355", "langlinks": [], "pageviews": 10,
               "topic": "Arts", "text": "string instrument"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(translation.join("en.jsonl"), text).unwrap();
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let config = ServerConfig {
        port: 0,
        datasets: Some(repo.join("tests/data/parity/datasets")),
        pages: Some(dir.0.join("pages")),
        translation: Some(translation),
        clients: Some(dir.0.join("clients.toml")),
        seed: Some(3),
        ..ServerConfig::default()
    };
    (Server::router(config).await.unwrap(), dir)
}

struct Reply {
    status: StatusCode,
    content_type: Option<String>,
    challenge: Option<String>,
    body: Value,
}

async fn call(app: &Router, request: Request<Body>) -> Reply {
    let response = app.clone().oneshot(request).await.unwrap();
    let text = |name| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let (content_type, challenge) = (text(header::CONTENT_TYPE), text(header::WWW_AUTHENTICATE));
    let status = response.status();
    let bytes = to_bytes(response.into_body(), 1 << 20).await.unwrap();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
    Reply {
        status,
        content_type,
        challenge,
        body,
    }
}

async fn get(app: &Router, uri: &str) -> Reply {
    call(app, Request::get(uri).body(Body::empty()).unwrap()).await
}

async fn post(app: &Router, uri: &str, bearer: Option<&str>, body: &str) -> Reply {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(bearer) = bearer {
        request = request.header(header::AUTHORIZATION, bearer);
    }
    call(app, request.body(Body::from(body.to_owned())).unwrap()).await
}

#[tokio::test]
async fn link_route_answers_from_the_page_store() {
    let (app, _dir) = app().await;
    let r = get(
        &app,
        &format!("{LINKS}/wikipedia/en/anarchism?threshold=0.1"),
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.content_type.as_deref(), Some("application/json"));
    let v = r.body;
    assert_eq!(
        (&v["page_title"], &v["pageid"], &v["revid"]),
        (&json!("Anarchism"), &json!(1), &json!(1))
    );
    let links = v["links"].as_array().unwrap();
    assert_eq!(v["links_count"].as_u64(), Some(links.len() as u64));
    assert!(
        links
            .iter()
            .any(|l| l["link_text"] == "political philosophy")
    );
    // Already linked targets are not suggested again.
    assert!(links.iter().all(|l| l["link_target"] != "Socialism"));
    let one = get(
        &app,
        &format!("{LINKS}/wikipedia/en/Anarchism?threshold=0&max_recommendations=1"),
    )
    .await;
    assert_eq!(one.body["links_count"], 1);
}

#[tokio::test]
async fn link_route_errors_have_their_shapes() {
    let (app, _dir) = app().await;
    let r = get(&app, &format!("{LINKS}/wikipedia/xx/Cat")).await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::NOT_FOUND,
            json!({"message": "Unable to process request for wikipedia/xx",
                   "valid_project_domain_pairs": ["wikipedia/en"]})
        )
    );
    let r = get(&app, &format!("{LINKS}/wikipedia/en/No_such_page")).await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::NOT_FOUND,
            json!({"message": "Page not found: No_such_page"})
        )
    );
    for bad in ["threshold=abc", "max_recommendations=2.0", "threshold=nan"] {
        let r = get(&app, &format!("{LINKS}/wikipedia/en/Anarchism?{bad}")).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}");
        assert!(r.body["message"].is_string(), "{bad}: {}", r.body);
    }
    let r = get(&app, "/nowhere").await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::NOT_FOUND,
            json!({"httpCode": 404, "httpReason": "Not Found"})
        )
    );
}

#[tokio::test]
async fn posted_links_need_a_token_and_a_valid_body() {
    let (app, _dir) = app().await;
    let uri = format!("{LINKS}/wikipedia/en/X?threshold=0.1");
    let body = json!({"wikitext": PAGE, "revid": 12, "pageid": 7}).to_string();
    let r = post(&app, &uri, None, &body).await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::UNAUTHORIZED,
            json!({"httpCode": 401, "httpReason": "Jwt is missing"})
        )
    );
    assert!(r.challenge.unwrap().starts_with("Bearer realm="));
    let r = post(&app, &uri, Some(BEARER), &body).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(
        (&r.body["pageid"], &r.body["revid"]),
        (&json!(7), &json!(12))
    );
    assert!(!r.body["links"].as_array().unwrap().is_empty());
    for bad in ["{", "{}", r#"{"wikitext":1,"revid":1,"pageid":1}"#] {
        let r = post(&app, &uri, Some(BEARER), bad).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.body);
        assert!(r.body["message"].is_string());
    }
}

#[tokio::test]
async fn translation_route_answers_and_refuses() {
    let (app, _dir) = app().await;
    let r = get(&app, TRANSLATION).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        r.body["detail"][1],
        json!({"type": "missing", "loc": ["query", "target"], "msg": "Field required", "input": null})
    );
    let r = get(
        &app,
        &format!("{TRANSLATION}?source=en&target=fr&rank_method=best"),
    )
    .await;
    assert_eq!(
        (r.status, r.body["detail"][0]["type"].as_str()),
        (StatusCode::UNPROCESSABLE_ENTITY, Some("enum"))
    );
    let r = get(&app, &format!("{TRANSLATION}?source=en&target=it")).await;
    assert_eq!(
        r.body["detail"][0]["msg"],
        "Value error, Invalid target language code"
    );
    let r = get(
        &app,
        &format!("{TRANSLATION}?source=en&target=de&include_pageviews=true"),
    )
    .await;
    assert_eq!(
        (r.status, r.body),
        (
            StatusCode::OK,
            json!([{"title": "Violin", "pageviews": 10, "wikidata_id": "Q8355", "rank": 3,
                    "langlinks_count": 0}])
        )
    );
    let r = get(
        &app,
        &format!("{TRANSLATION}?source=en&target=fr&seed=Cat&rank_method=sitelinks"),
    )
    .await;
    assert_eq!(
        r.body,
        json!([{"title": "Lion", "pageviews": 0, "wikidata_id": "Q140", "rank": 1,
                "langlinks_count": 1}])
    );
    let forged = Request::get(format!("{TRANSLATION}?source=en&target=fr"))
        .header(header::AUTHORIZATION, "Bearer forged.token.x")
        .body(Body::empty())
        .unwrap();
    let r = call(&app, forged).await;
    assert_eq!(
        (r.status, r.body["httpReason"].as_str()),
        (StatusCode::UNAUTHORIZED, Some("Jwt verification fails"))
    );
}

struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("ws-router-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
