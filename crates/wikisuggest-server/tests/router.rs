//! Route tests through the application's `Router` itself: each request is one
//! `tower::ServiceExt::oneshot` call, with no listener or socket, so the assertions are on
//! what the routes, the gateway and the fallbacks answer (status, headers and body bytes).
//! What needs a socket (connection caps, slow clients, shutdown) is tested in
//! `connections.rs` and `slow_clients.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::http::Request;
use serde_json::{Value, json};
use tower::ServiceExt;
use wikisuggest_server::{RateLimits, Server, ServerConfig};

use support::{TempDir, repo};

const LINKS: &str = "/service/linkrecommendation/v1/linkrecommendations";
const TRANSLATION: &str = "/service/lw/recommendation/api/v1/translation";
const TOKEN: &str = "/w/rest.php/oauth2/access_token";
const PERSONAL: &str = "test-personal-token-0123456789";
const CLIENTS: &str = r#"
[[clients]]
id = "conf"
secret = "conf-secret"
redirect_uris = ["http://127.0.0.1/cb"]
[[clients]]
id = "pub"
redirect_uris = ["http://127.0.0.1/cb"]
grants = ["authorization_code", "refresh_token"]
[[personal_tokens]]
token = "test-personal-token-0123456789"
name = "tester"
"#;
const PAGE: &str = "'''Anarchism''' is a political philosophy. It is [[socialism|socialist]].\n\
                    == History ==\nThe word anarchy comes from Greek.\n";

struct Reply {
    status: u16,
    /// Header names in lower case.
    headers: HashMap<String, String>,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

async fn send(
    app: &Router,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut request = Request::builder().method(method).uri(path);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let request = request.body(Body::from(body.to_owned())).unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap().to_owned()))
        .collect();
    let bytes = to_bytes(response.into_body(), 1 << 24).await.unwrap();
    Reply {
        status,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

async fn get(app: &Router, path: &str) -> Reply {
    send(app, "GET", path, &[], "").await
}

async fn form(app: &Router, body: &str) -> Reply {
    send(
        app,
        "POST",
        TOKEN,
        &[("Content-Type", "application/x-www-form-urlencoded")],
        body,
    )
    .await
}

/// The translation catalog shipped in the Python package (English Wikipedia articles of
/// the translation test dumps, with every part).
fn shipped_catalog() -> PathBuf {
    repo().join("python/wikisuggest/data/translation")
}

/// A case production's service answered on the translation test dumps (the shipped
/// catalog's source): its recorded body.
fn recorded(file: &str, name: &str) -> Value {
    let path = repo().join(format!("tests/data/translation/expected/{file}.json"));
    let data: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let case = data["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no recorded case {name}"));
    case["body"].clone()
}

/// The app over a page, the parity datasets, the shipped translation catalog and the
/// clients above, as `tweak` changes its configuration, with the directory holding its
/// files (removed on drop).
async fn app(tweak: impl FnOnce(&mut ServerConfig)) -> (Router, TempDir) {
    let dir = TempDir::new("router");
    std::fs::create_dir_all(dir.join("pages")).unwrap();
    std::fs::write(dir.join("pages/Anarchism.wikitext"), PAGE).unwrap();
    std::fs::write(dir.join("clients.toml"), CLIENTS).unwrap();
    let mut config = ServerConfig {
        port: 0,
        datasets: Some(repo().join("tests/data/parity/datasets")),
        pages: Some(dir.join("pages")),
        translation_catalogs: vec![(Some("enwiki".to_owned()), shipped_catalog())],
        clients: Some(dir.join("clients.toml")),
        seed: Some(3),
        ..ServerConfig::default()
    };
    tweak(&mut config);
    (Server::router(config).await.unwrap(), dir)
}

#[tokio::test]
async fn get_links_from_the_page_store() {
    let (app, _dir) = app(|_| {}).await;
    let r = get(
        &app,
        &format!("{LINKS}/wikipedia/en/anarchism?threshold=0.1"),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.headers["content-type"], "application/json");
    assert!(r.body.ends_with("}\n"));
    let v = r.json();
    assert_eq!(
        (
            v["page_title"].as_str(),
            v["pageid"].as_i64(),
            v["revid"].as_i64()
        ),
        (Some("Anarchism"), Some(1), Some(1))
    );
    assert_eq!(v["meta"]["format_version"], 1);
    assert_eq!(
        v["meta"]["dataset_checksums"]["anchors"]
            .as_str()
            .map(str::len),
        Some(64)
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
    for link in links {
        let offset = link["wikitext_offset"].as_u64().unwrap() as usize;
        let text = link["link_text"].as_str().unwrap();
        let at: String = PAGE
            .chars()
            .skip(offset)
            .take(text.chars().count())
            .collect();
        assert_eq!(at, text);
    }
    let lead_out = get(
        &app,
        &format!("{LINKS}/wikipedia/en/Anarchism?threshold=0.1&sections_to_exclude=%25LEAD%25"),
    )
    .await
    .json();
    assert!(
        lead_out["links"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["wikitext_offset"].as_u64() > Some(70))
    );
    let one = get(
        &app,
        &format!("{LINKS}/wikipedia/en/Anarchism?threshold=0&max_recommendations=1"),
    )
    .await
    .json();
    assert_eq!(one["links_count"], 1);
    let none = get(
        &app,
        &format!("{LINKS}/wikipedia/en/Anarchism?threshold=1.5"),
    )
    .await
    .json();
    assert_eq!(none["links_count"], 0);
}

#[tokio::test]
async fn link_errors_are_json() {
    let (app, _dir) = app(|_| {}).await;
    let r = get(&app, &format!("{LINKS}/wikipedia/xx/Cat")).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        r.json(),
        json!({"message": "Unable to process request for wikipedia/xx", "valid_project_domain_pairs": ["wikipedia/en"]})
    );
    let r = get(&app, &format!("{LINKS}/wikipedia/en/No_such_page")).await;
    assert_eq!(
        (r.status, r.json()),
        (404, json!({"message": "Page not found: No_such_page"}))
    );
    let r = get(&app, &format!("{LINKS}/wikipedia/en/Anarchism?revision=99")).await;
    assert_eq!(r.status, 404);
    assert_eq!(
        get(&app, &format!("{LINKS}/wikipedia/en/Anarchism?revision=1"))
            .await
            .status,
        200
    );
    // A revision that is no revision id is refused, not read as "the latest".
    for bad in ["x", "1%7C2%7C3", "-5", "99999999999999999999"] {
        let r = get(
            &app,
            &format!("{LINKS}/wikipedia/en/Anarchism?revision={bad}"),
        )
        .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
        assert!(r.json()["message"].as_str().unwrap().contains("revision"));
    }
    for bad in ["threshold=abc", "max_recommendations=2.0"] {
        let r = get(&app, &format!("{LINKS}/wikipedia/en/Anarchism?{bad}")).await;
        assert_eq!(r.status, 400, "{bad}");
        assert!(
            r.json()["message"]
                .as_str()
                .unwrap()
                .starts_with("Invalid value")
        );
    }
    // NaN would compare as "keep every link"; it is refused like the client refuses it.
    let nan = get(
        &app,
        &format!("{LINKS}/wikipedia/en/Anarchism?threshold=nan"),
    )
    .await;
    assert_eq!(nan.status, 400);
    assert!(
        nan.json()["message"]
            .as_str()
            .unwrap()
            .contains("threshold")
    );
    let auth = [("Authorization", "Bearer test-personal-token-0123456789")];
    let post = |body: &'static str| {
        send(
            &app,
            "POST",
            "/service/linkrecommendation/v1/linkrecommendations/wikipedia/en/X",
            &auth,
            body,
        )
    };
    for body in [
        "",
        "{",
        "{}",
        "null",
        "[1]",
        r#"{"wikitext":"a","revid":1}"#,
        r#"{"wikitext":1,"revid":1,"pageid":1}"#,
        r#"{"wikitext":"a","revid":"x","pageid":1}"#,
        r#"{"wikitext":"a","revid":1,"pageid":1,"sections_to_exclude":"Lead"}"#,
        r#"{"wikitext":"a","revid":1,"pageid":1,"sections_to_exclude":[1]}"#,
    ] {
        let r = post(body).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.json()["message"].is_string());
    }
    let r = get(&app, "/nowhere").await;
    assert_eq!(
        (r.status, r.json()),
        (404, json!({"httpCode": 404, "httpReason": "Not Found"}))
    );
}

#[tokio::test]
async fn post_links_needs_a_valid_token() {
    let (app, _dir) = app(|c| c.access_token_ttl = Duration::from_secs(1)).await;
    let path = format!("{LINKS}/wikipedia/en/Anarchism?threshold=0.1&sections_to_exclude=History");
    let body = json!({"wikitext": PAGE, "revid": "12", "pageid": "p-7", "sections_to_exclude": ["%LEAD%"]}).to_string();
    let r = send(&app, "POST", &path, &[], &body).await;
    assert_eq!(
        (r.status, r.json()),
        (
            401,
            json!({"httpCode": 401, "httpReason": "Jwt is missing"})
        )
    );
    assert!(r.headers["www-authenticate"].starts_with("Bearer realm="));
    let r = send(
        &app,
        "POST",
        &path,
        &[("Authorization", &format!("Bearer {PERSONAL}"))],
        &body,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v = r.json();
    assert_eq!(
        (v["pageid"].clone(), v["revid"].clone()),
        (json!("p-7"), json!(12))
    );
    // Integers are echoed as integers.
    let plain = json!({"wikitext": PAGE, "revid": 12, "pageid": 7}).to_string();
    let r = send(
        &app,
        "POST",
        &path,
        &[("Authorization", &format!("Bearer {PERSONAL}"))],
        &plain,
    )
    .await
    .json();
    assert_eq!((&r["pageid"], &r["revid"]), (&json!(7), &json!(12)));
    // The body's sections win over the query's: the lead is excluded, History is not.
    let links = v["links"].as_array().unwrap();
    assert!(
        !links.is_empty()
            && links
                .iter()
                .all(|l| l["wikitext_offset"].as_u64() > Some(70))
    );

    let token = form(
        &app,
        "grant_type=client_credentials&client_id=conf&client_secret=conf-secret",
    )
    .await
    .json();
    let bearer = format!("Bearer {}", token["access_token"].as_str().unwrap());
    assert_eq!(
        send(&app, "POST", &path, &[("Authorization", &bearer)], &body)
            .await
            .status,
        200
    );
    let r = get(&app, &format!("{TRANSLATION}?source=en&target=fr")).await;
    assert_eq!(r.status, 200);
    let r = send(
        &app,
        "GET",
        &format!("{TRANSLATION}?source=en&target=fr"),
        &[("Authorization", "Bearer forged.token.x")],
        "",
    )
    .await;
    assert_eq!(
        (r.status, r.json()["httpReason"].as_str()),
        (401, Some("Jwt verification fails"))
    );
    assert!(r.headers["www-authenticate"].contains("error=\"invalid_token\""));
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let r = send(
        &app,
        "GET",
        &format!("{TRANSLATION}?source=en&target=fr"),
        &[("Authorization", &bearer)],
        "",
    )
    .await;
    assert_eq!(
        (r.status, r.json()["httpReason"].as_str()),
        (401, Some("Jwt is expired"))
    );
    assert!(r.headers["www-authenticate"].contains("error=\"invalid_token\""));
}

/// `items` with the five fields of the contract's array, in the contract's order.
fn contract_fields(items: &Value) -> Value {
    let fields = [
        "title",
        "pageviews",
        "wikidata_id",
        "rank",
        "langlinks_count",
    ];
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|item| {
            let kept = fields.iter().map(|&k| (k.to_owned(), item[k].clone()));
            Value::Object(kept.collect())
        })
        .collect()
}

fn titles(items: &Value) -> Vec<String> {
    let items = items.as_array().unwrap();
    items
        .iter()
        .map(|i| i["title"].as_str().unwrap().to_owned())
        .collect()
}

/// The translation route over a catalog of the dumps answers as production answered on the
/// same dumps: its refusals, popular mode in the contract's array, the day's views, and a
/// seeded shuffle that draws from the same candidates.
#[tokio::test]
async fn translation_route() {
    let (app, _dir) = app(|_| {}).await;
    let r = get(&app, &format!("{TRANSLATION}?source=en")).await;
    assert_eq!(r.status, 422);
    assert_eq!(r.json(), recorded("errors", "error-missing-target"));
    let r = get(
        &app,
        &format!("{TRANSLATION}?source=en&target=fr&rank_method=best"),
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(r.json(), recorded("errors", "error-rank-method"));
    let r = get(&app, &format!("{TRANSLATION}?source=en&target=zz9")).await;
    assert_eq!(r.status, 422);
    let want = recorded("errors", "error-invalid-target");
    assert_eq!(r.json()["detail"][0]["msg"], want["detail"][0]["msg"]);
    assert_eq!(r.json()["detail"][0]["type"], "value_error");

    // Popular mode, ranked by interlanguage links: production's answer, field for field.
    let path = format!("{TRANSLATION}?source=en&target=fr&rank_method=sitelinks&count=12");
    let r = get(&app, &path).await;
    assert_eq!(r.status, 200);
    let want = recorded("array_shape", "array-popular-fr-sitelinks");
    assert_eq!(r.json(), contract_fields(&want));

    // The day's views: every item of the top list was viewed; production's where it looked.
    let r = get(&app, &format!("{path}&include_pageviews=true"))
        .await
        .json();
    let want = recorded("popular", "popular-fr-pageviews")["recommendations"].clone();
    assert_eq!(titles(&r), titles(&want));
    for (got, want) in r.as_array().unwrap().iter().zip(want.as_array().unwrap()) {
        let views = got["pageviews"].as_i64().unwrap();
        assert!(views > 0, "{got}");
        if want["pageviews"].as_i64().unwrap() > 0 {
            assert_eq!(got["pageviews"], want["pageviews"]);
        }
    }

    // The default ranking shuffles, reproducibly under the server's seed, among the same
    // candidates.
    let a = get(&app, &format!("{TRANSLATION}?source=en&target=fr")).await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json().as_array().map(Vec::len), Some(12));
    let again = get(&app, &format!("{TRANSLATION}?source=en&target=fr")).await;
    assert_eq!(a.body, again.body, "seeded order");
    let pool = titles(&recorded("popular", "popular-fr-sitelinks")["recommendations"]);
    for title in titles(&a.json()) {
        assert!(pool.contains(&title), "{title} is not a candidate");
    }
}

fn location_query(r: &Reply) -> HashMap<String, String> {
    let location = &r.headers["location"];
    let query = location.split_once('?').map(|(_, q)| q).unwrap_or_default();
    form_urlencoded_pairs(query)
}

fn form_urlencoded_pairs(query: &str) -> HashMap<String, String> {
    form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect()
}

#[tokio::test]
async fn oauth_flows_and_errors() {
    let (app, _dir) = app(|_| {}).await;
    let r = form(
        &app,
        "grant_type=client_credentials&client_id=conf&client_secret=conf-secret",
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["cache-control"], "no-store");
    let v = r.json();
    assert_eq!(
        (v["token_type"].as_str(), v["expires_in"].as_u64()),
        (Some("Bearer"), Some(14400))
    );
    assert!(v.get("refresh_token").is_none());
    for (body, status, error) in [
        (
            "grant_type=client_credentials&client_id=conf&client_secret=nope",
            401,
            "invalid_client",
        ),
        (
            "grant_type=client_credentials&client_id=conf",
            400,
            "invalid_request",
        ),
        (
            "grant_type=client_credentials&client_id=pub",
            401,
            "invalid_client",
        ),
        (
            "grant_type=client_credentials&client_id=ghost&client_secret=x",
            401,
            "invalid_client",
        ),
        (
            "grant_type=password&client_id=conf&client_secret=conf-secret",
            400,
            "unsupported_grant_type",
        ),
        ("client_id=conf", 400, "invalid_request"),
        (
            "grant_type=refresh_token&client_id=conf&client_secret=conf-secret&refresh_token=zz",
            400,
            "invalid_grant",
        ),
        (
            "grant_type=authorization_code&client_id=conf&client_secret=conf-secret&code=zz",
            400,
            "invalid_grant",
        ),
    ] {
        let r = form(&app, body).await;
        assert_eq!(
            (r.status, r.json()["error"].as_str()),
            (status, Some(error)),
            "{body}"
        );
    }
    let r = send(
        &app,
        "POST",
        TOKEN,
        &[("Content-Type", "multipart/form-data; boundary=x")],
        "--x--",
    )
    .await;
    assert_eq!(r.status, 415);
    assert_eq!(r.json()["errorKey"], "rest-unsupported-content-type");
    // HTTP Basic client authentication.
    let r = send(
        &app,
        "POST",
        TOKEN,
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Authorization", "Basic Y29uZjpjb25mLXNlY3JldA=="),
        ],
        "grant_type=client_credentials",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);

    // Public client, PKCE S256, loopback redirect with any port.
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    let redirect = "http%3A%2F%2F127.0.0.1%3A5555%2Fcb";
    let r = get(&app, &format!("/w/rest.php/oauth2/authorize?response_type=code&client_id=pub&redirect_uri={redirect}&state=s1&code_challenge={challenge}&code_challenge_method=S256")).await;
    assert_eq!(r.status, 302);
    assert!(r.headers["location"].starts_with("http://127.0.0.1:5555/cb?code="));
    let q = location_query(&r);
    assert_eq!(q["state"], "s1");
    let exchange = format!(
        "grant_type=authorization_code&client_id=pub&code={}&redirect_uri={redirect}&code_verifier={verifier}",
        q["code"]
    );
    let tokens = form(&app, &exchange).await;
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    let refresh = tokens.json()["refresh_token"].as_str().unwrap().to_owned();
    // The code is single-use.
    assert_eq!(form(&app, &exchange).await.json()["error"], "invalid_grant");
    let rotated = form(
        &app,
        &format!("grant_type=refresh_token&client_id=pub&refresh_token={refresh}"),
    )
    .await
    .json();
    let new_refresh = rotated["refresh_token"].as_str().unwrap();
    assert_ne!(new_refresh, refresh);
    // Grace period: the old refresh token still works for a retry.
    assert_eq!(
        form(
            &app,
            &format!("grant_type=refresh_token&client_id=pub&refresh_token={refresh}")
        )
        .await
        .status,
        200
    );
    let r = form(
        &app,
        &format!(
            "grant_type=refresh_token&client_id=pub&refresh_token={new_refresh}&scope=editpage"
        ),
    )
    .await;
    assert_eq!(r.json()["error"], "invalid_scope");

    // Authorization errors: before the redirect is trusted an HTML page, after it a redirect.
    let r = get(
        &app,
        "/w/rest.php/oauth2/authorize?response_type=code&client_id=ghost",
    )
    .await;
    assert_eq!(r.status, 401);
    assert!(r.headers["content-type"].starts_with("text/html"));
    let r = get(&app, "/w/rest.php/oauth2/authorize?response_type=code&client_id=pub&redirect_uri=http%3A%2F%2Fevil.example%2Fcb").await;
    assert_eq!(r.status, 401);
    let r = get(
        &app,
        "/w/rest.php/oauth2/authorize?response_type=code&client_id=pub&state=z",
    )
    .await;
    assert_eq!(r.status, 302);
    let q = location_query(&r);
    assert_eq!(
        (q["error"].as_str(), q["state"].as_str()),
        ("invalid_request", "z")
    );
    // Plain PKCE, confidential client with a secret.
    let plain = "p".repeat(50);
    let r = get(&app, &format!("/w/rest.php/oauth2/authorize?response_type=code&client_id=conf&code_challenge={plain}&code_challenge_method=plain")).await;
    let code = location_query(&r)["code"].clone();
    let wrong = form(&app, &format!("grant_type=authorization_code&client_id=conf&client_secret=conf-secret&code={code}&code_verifier={}", "q".repeat(50))).await;
    assert_eq!(wrong.json()["error"], "invalid_grant");
    let r = get(&app, &format!("/w/rest.php/oauth2/authorize?response_type=code&client_id=conf&code_challenge={plain}&code_challenge_method=plain")).await;
    let code = location_query(&r)["code"].clone();
    let ok = form(&app, &format!("grant_type=authorization_code&client_id=conf&client_secret=conf-secret&code={code}&code_verifier={plain}")).await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn rate_limits_health_and_openapi() {
    let (app, _dir) = app(|c| {
        c.rate_limits = RateLimits {
            authenticated_per_minute: 3,
            anonymous_per_minute: 2,
        };
    })
    .await;
    let path = format!("{TRANSLATION}?source=en&target=fr");
    let ua = |agent: &'static str| [("User-Agent", agent)];
    assert_eq!(send(&app, "GET", &path, &ua("a"), "").await.status, 200);
    assert_eq!(send(&app, "GET", &path, &ua("a"), "").await.status, 200);
    let r = send(&app, "GET", &path, &ua("a"), "").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.headers["retry-after"], "30");
    // Another User-Agent, and an app with a token, have their own buckets.
    assert_eq!(send(&app, "GET", &path, &ua("b"), "").await.status, 200);
    let auth = [("Authorization", "Bearer test-personal-token-0123456789")];
    for _ in 0..3 {
        assert_eq!(send(&app, "GET", &path, &auth, "").await.status, 200);
    }
    assert_eq!(send(&app, "GET", &path, &auth, "").await.status, 429);
    // OAuth and operational routes are not limited.
    for _ in 0..3 {
        assert_eq!(get(&app, "/healthz").await.status, 200);
    }
    let doc = get(&app, "/openapi.json").await.json();
    assert_eq!(doc["openapi"], "3.0.3");
    let paths: Vec<&String> = doc["paths"].as_object().unwrap().keys().collect();
    // Link, translation and its three collection routes, token, authorize, health, this.
    assert_eq!(paths.len(), 9);
    assert!(doc["paths"][TOKEN]["post"]["responses"]["415"].is_object());
}

#[tokio::test]
async fn bodies_are_bounded() {
    let (app, _dir) = app(|c| c.max_body_bytes = 1000).await;
    let auth = [("Authorization", "Bearer test-personal-token-0123456789")];
    let path = format!("{LINKS}/wikipedia/en/Anarchism");
    let small = json!({"wikitext": "x", "revid": 1, "pageid": 1}).to_string();
    assert_eq!(send(&app, "POST", &path, &auth, &small).await.status, 200);
    let large = json!({"wikitext": "x".repeat(2000), "revid": 1, "pageid": 1}).to_string();
    assert_eq!(send(&app, "POST", &path, &auth, &large).await.status, 413);
}

const ESSENTIAL: &str = "Essential Articles";

/// The shipped catalog in the envelope shape: sibling routes, pagination through a real
/// collection over HTTP, and the document describing every parameter.
#[tokio::test]
async fn translation_envelope_collections_and_siblings() {
    let (app, _dir) = app(|config| {
        config.translation_shape = wikisuggest_server::TranslationShape::Envelope;
    })
    .await;
    let listed = get(&app, &format!("{TRANSLATION}/page-collections")).await;
    assert_eq!(listed.status, 200);
    let listings = recorded("listings", "page-collections");
    assert_eq!(listed.json(), listings);
    let essential = listings
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == ESSENTIAL)
        .cloned()
        .unwrap();
    let total = essential["articles_count"].as_u64().unwrap();
    let groups = get(&app, &format!("{TRANSLATION}/page-collection-groups"))
        .await
        .json();
    assert_eq!(groups, recorded("listings", "page-collection-groups"));

    // Every page of one collection: the continuation is followed until nothing new comes.
    let base = format!(
        "{TRANSLATION}?source=en&target=sw&collections=true&seed=essential%20articles&count=4"
    );
    let first = get(&app, &base).await.json();
    let seed = first["continue_seed"].as_i64().unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut page = first;
    let mut pages = 0;
    loop {
        pages += 1;
        let items = page["recommendations"].as_array().unwrap().clone();
        let new = items
            .iter()
            .filter(|i| seen.insert(i["wikidata_id"].as_str().unwrap().to_owned()))
            .count();
        for item in &items {
            assert_eq!(item["collection"]["name"], ESSENTIAL);
            assert!(item["size"].as_i64().unwrap() > 0);
        }
        let offset = page["continue_offset"].as_i64().unwrap();
        if offset == -1 || new == 0 {
            break;
        }
        page = get(
            &app,
            &format!("{base}&continue_offset={offset}&continue_seed={seed}"),
        )
        .await
        .json();
        assert_eq!(page["continue_seed"].as_i64(), Some(seed));
    }
    assert!(pages > 3, "{pages} pages");
    let in_swahili = collection_in("sw", &app).await;
    assert_eq!(
        seen.len() as u64,
        total - in_swahili,
        "every missing article, once"
    );

    let members: Vec<String> = seen.iter().take(2).cloned().collect();
    let r = get(
        &app,
        &format!(
            "{TRANSLATION}/page-collection-membership?collection=Essential%20Articles&qids={}%7CQ1",
            members.join("%7C")
        ),
    )
    .await
    .json();
    assert_eq!(r[&members[0]], true);
    assert_eq!(r["Q1"], false);
    let r = get(
        &app,
        &format!("{TRANSLATION}/page-collection-membership?collection=x"),
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["detail"][0]["type"], "value_error");

    // Popular mode in the envelope: every item field, no continuation; lead sections as
    // production measured them.
    let r = get(
        &app,
        &format!(
            "{TRANSLATION}?source=en&target=fr&rank_method=sitelinks&count=15&lead_section=true"
        ),
    )
    .await
    .json();
    assert_eq!(r["continue_offset"], Value::Null);
    let want = recorded("popular", "popular-fr-lead-section-sizes");
    assert_eq!(r["recommendations"], want["recommendations"]);
    let items = r["recommendations"].as_array().unwrap();
    assert!(
        items
            .iter()
            .filter(|i| i["lead_section_size"].is_i64())
            .count()
            > 10
    );
    let r = get(
        &app,
        &format!("{TRANSLATION}?source=en&target=fr&min_size=x"),
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["detail"][0]["loc"], json!(["query", "min_size"]));

    let doc = get(&app, "/openapi.json").await.json();
    let params: Vec<&str> = doc["paths"][TRANSLATION]["get"]["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(params.len(), 16);
    for sibling in [
        "page-collections",
        "page-collection-groups",
        "page-collection-membership",
    ] {
        assert!(doc["paths"][format!("{TRANSLATION}/{sibling}")]["get"].is_object());
    }
}

/// How many articles of the essential articles collection exist in `target`, from the
/// collection metadata the items carry.
async fn collection_in(target: &str, app: &Router) -> u64 {
    let r = get(
        app,
        &format!(
            "{TRANSLATION}?source=en&target={target}&collections=true&seed=Essential%20Articles&count=1"
        ),
    )
    .await
    .json();
    r["recommendations"][0]["collection"]["articles_by_language_count"][target]
        .as_u64()
        .unwrap()
}

/// Edge titles normalise in the server exactly as in the engine (CPython's `str.strip` and
/// `str.upper`, `urllib.parse.unquote`): what the Python engine and the server echo as
/// `page_title` for one title is the same string, and a title one refuses the other refuses.
#[tokio::test]
async fn titles_normalise_as_the_engine_normalises_them() {
    let (app, _dir) = app(|_| {}).await;
    let engine = wikisuggest_engine::Engine::open(
        &repo().join("tests/data/parity/datasets/enwiki"),
        "enwiki",
    )
    .unwrap();
    let options = wikisuggest_engine::RecommendOptions::default();
    let titles = [
        "\u{1f}cat",
        "cat\u{1c}\u{1d}",
        "\u{85}\u{a0}dog",
        "\u{200b}x",
        "ǆemal",
        "ßtraße",
        "ﬁx",
        "%C3é%A9",
        "a_b#frag",
        "  ",
    ];
    let body = json!({"wikitext": "A cat.", "revid": 1, "pageid": 1}).to_string();
    let auth = [("Authorization", "Bearer test-personal-token-0123456789")];
    for title in titles {
        // The router decodes the path once; the title is then what the engine is given.
        let encoded: String = title.bytes().map(|b| format!("%{b:02X}")).collect();
        let r = send(
            &app,
            "POST",
            &format!("{LINKS}/wikipedia/en/{encoded}"),
            &auth,
            &body,
        )
        .await;
        // A title both refuse (U+FFFD from a split escape, nothing left) is a 400.
        match engine.recommend("A cat.", title, None, None, &options) {
            Ok(set) => {
                assert_eq!(r.status, 200, "{title:?}: {}", r.body);
                assert_eq!(r.json()["page_title"], json!(set.page_title), "{title:?}");
            }
            Err(_) => assert_eq!(r.status, 400, "{title:?}: {}", r.body),
        }
    }
    // The ones the two front ends used to disagree on.
    let expected = [
        ("\u{1f}cat", "Cat"),
        ("cat\u{1c}\u{1d}", "Cat"),
        ("ßtraße", "SStraße"),
    ];
    for (title, want) in expected {
        let got = engine
            .recommend("A cat.", title, None, None, &options)
            .unwrap();
        assert_eq!(got.page_title, want);
    }
}
