//! Token-manager tests against a tiny token endpoint on 127.0.0.1 whose answers each test
//! scripts.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;
use crate::encode::Query;
use crate::oauth::store::TokenStore;
use crate::oauth::token::StoredToken;
use crate::retry::RetryPolicy;

/// What the fake endpoint does with one request.
enum Reply {
    Json(u16, String),
    /// Close the connection without answering (the request was processed, the answer lost).
    Drop,
}

type Handler = dyn Fn(usize, &HashMap<String, String>) -> Reply + Send + Sync;

struct FakeServer {
    url: String,
    requests: Arc<AtomicUsize>,
    forms: Arc<Mutex<Vec<HashMap<String, String>>>>,
}

fn parse_form(body: &str) -> HashMap<String, String> {
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| {
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(String::from_utf8_lossy(&buf[end + 4..end + 4 + length]).into());
            }
        }
    }
}

/// Serve the token endpoint with `handler`, delaying each answer by `delay` so that
/// concurrent callers pile up while a renewal is in flight.
async fn serve(delay: Duration, handler: Arc<Handler>) -> FakeServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(AtomicUsize::new(0));
    let forms = Arc::new(Mutex::new(Vec::new()));
    let (count, seen) = (requests.clone(), forms.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (count, seen, handler) = (count.clone(), seen.clone(), handler.clone());
            tokio::spawn(async move {
                let Some(body) = read_request(&mut stream).await else {
                    return;
                };
                let form = parse_form(&body);
                let n = count.fetch_add(1, Ordering::SeqCst);
                seen.lock().unwrap().push(form.clone());
                tokio::time::sleep(delay).await;
                if let Reply::Json(status, json) = handler(n, &form) {
                    let response = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{json}",
                        json.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                }
                let _ = stream.shutdown().await;
            });
        }
    });
    FakeServer {
        url,
        requests,
        forms,
    }
}

fn client_for(server: &FakeServer) -> Client {
    let mut config = ClientConfig::new("ManagerTest/1.0 (test@example.org)");
    config.auth_url = server.url.clone();
    config.base_url = server.url.clone();
    config.retry = RetryPolicy {
        backoff_base: Duration::from_millis(10),
        ..RetryPolicy::default()
    };
    Client::new(config, None).unwrap()
}

fn token_json(access: &str, refresh: Option<&str>, expires_in: u64) -> String {
    match refresh {
        Some(rt) => format!(
            r#"{{"token_type":"Bearer","expires_in":{expires_in},"access_token":"{access}","refresh_token":"{rt}"}}"#
        ),
        None => format!(
            r#"{{"token_type":"Bearer","expires_in":{expires_in},"access_token":"{access}"}}"#
        ),
    }
}

fn invalid_grant() -> Reply {
    Reply::Json(
        400,
        r#"{"error":"invalid_grant","error_description":"The refresh token is invalid.","hint":"Token has been revoked"}"#.into(),
    )
}

#[derive(Default)]
struct MemoryStore {
    token: Mutex<Option<StoredToken>>,
    saves: AtomicUsize,
}

impl TokenStore for MemoryStore {
    fn load(&self) -> Result<Option<StoredToken>> {
        Ok(self.token.lock().unwrap().clone())
    }

    fn save(&self, token: &StoredToken) -> Result<()> {
        self.saves.fetch_add(1, Ordering::SeqCst);
        *self.token.lock().unwrap() = Some(token.clone());
        Ok(())
    }
}

fn cc_manager(server: &FakeServer, leeway: Duration) -> Arc<TokenManager> {
    let manager = TokenManager::client_credentials(
        "app".into(),
        Secret::new("app-secret"),
        ManagerOptions {
            leeway,
            ..ManagerOptions::default()
        },
    )
    .unwrap();
    manager.attach(&client_for(server)).unwrap();
    Arc::new(manager)
}

async fn call_concurrently(manager: &Arc<TokenManager>, callers: usize) -> Vec<String> {
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..callers {
        let manager = manager.clone();
        tasks.spawn(async move { manager.token().await.unwrap().access_token });
    }
    let mut tokens = Vec::new();
    while let Some(token) = tasks.join_next().await {
        tokens.push(token.unwrap().expose().to_owned());
    }
    tokens
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_callers_at_expiry_cause_one_request() {
    let server = serve(
        Duration::from_millis(150),
        Arc::new(|n, form| {
            assert_eq!(form["grant_type"], "client_credentials");
            assert_eq!(form["client_secret"], "app-secret");
            Reply::Json(200, token_json(&format!("at-{n}"), None, 2))
        }),
    )
    .await;
    let manager = cc_manager(&server, DEFAULT_LEEWAY);

    let first = call_concurrently(&manager, 1000).await;
    assert!(first.iter().all(|t| t == "at-0"));
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);

    // A 2 s token with a 300 s leeway is due at half-life; wait past it.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let second = call_concurrently(&manager, 1000).await;
    assert!(second.iter().all(|t| t == "at-1"), "{:?}", &second[..3]);
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn rejected_token_is_renewed_once_for_all_who_saw_it() {
    let server = serve(
        Duration::from_millis(50),
        Arc::new(|n, _| Reply::Json(200, token_json(&format!("at-{n}"), None, 3600))),
    )
    .await;
    let manager = cc_manager(&server, DEFAULT_LEEWAY);
    let stale = manager.token().await.unwrap().access_token;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..50 {
        let (manager, stale) = (manager.clone(), stale.clone());
        tasks.spawn(async move { manager.renew_after_rejection(&stale).await.unwrap() });
    }
    while let Some(renewed) = tasks.join_next().await {
        assert_eq!(renewed.unwrap().unwrap().access_token.expose(), "at-1");
    }
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn personal_tokens_are_never_renewed() {
    let manager = TokenManager::personal(Secret::new("personal")).unwrap();
    let token = manager.token().await.unwrap();
    assert_eq!(token.access_token.expose(), "personal");
    assert!(
        manager
            .renew_after_rejection(&token.access_token)
            .await
            .unwrap()
            .is_none()
    );
}

fn refresh_manager(
    server: &FakeServer,
    refresh_token: Option<&str>,
    store: Option<Arc<MemoryStore>>,
) -> Result<TokenManager> {
    let manager = TokenManager::refresh_token(
        refresh_token.map(Secret::new),
        None,
        "app".into(),
        None,
        ManagerOptions {
            store: store.map(|s| s as Arc<dyn TokenStore>),
            ..ManagerOptions::default()
        },
    )?;
    manager.attach(&client_for(server))?;
    Ok(manager)
}

/// A refresh endpoint that rotates: `rt-N` is answered with `rt-(N+1)`; only the newest
/// refresh token (and, in these tests, nothing older) is accepted.
fn rotating() -> Arc<Handler> {
    let newest = Arc::new(Mutex::new(0usize));
    Arc::new(move |_, form| {
        let mut newest = newest.lock().unwrap();
        if form["refresh_token"] != format!("rt-{}", *newest) {
            return invalid_grant();
        }
        *newest += 1;
        Reply::Json(
            200,
            token_json(
                &format!("at-{}", *newest),
                Some(&format!("rt-{}", *newest)),
                3600,
            ),
        )
    })
}

#[tokio::test]
async fn rotation_persists_the_new_refresh_token_before_returning() {
    let server = serve(Duration::ZERO, rotating()).await;
    let store = Arc::new(MemoryStore::default());
    let manager = refresh_manager(&server, Some("rt-0"), Some(store.clone())).unwrap();

    let token = manager.token().await.unwrap();
    assert_eq!(token.access_token.expose(), "at-1");
    let saved = store.load().unwrap().unwrap();
    assert_eq!(saved.refresh_token.as_deref(), Some("rt-1"));
    assert_eq!(saved.access_token, "at-1");

    // The next renewal uses the rotated token.
    let renewed = manager
        .renew_after_rejection(&token.access_token)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(renewed.access_token.expose(), "at-2");
    let forms = server.forms.lock().unwrap();
    let used: Vec<_> = forms.iter().map(|f| f["refresh_token"].as_str()).collect();
    assert_eq!(used, ["rt-0", "rt-1"]);
    assert_eq!(
        store.load().unwrap().unwrap().refresh_token.as_deref(),
        Some("rt-2")
    );
}

#[tokio::test]
async fn lost_answer_is_retried_with_the_same_refresh_token() {
    // The first answer is lost after the server rotated; the old token is still inside the
    // server's grace period, so the retry with it succeeds.
    let server = serve(
        Duration::ZERO,
        Arc::new(|n, form| {
            assert_eq!(form["refresh_token"], "rt-0");
            if n == 0 {
                Reply::Drop
            } else {
                Reply::Json(200, token_json("at-1", Some("rt-1"), 3600))
            }
        }),
    )
    .await;
    let store = Arc::new(MemoryStore::default());
    let manager = refresh_manager(&server, Some("rt-0"), Some(store.clone())).unwrap();
    let token = manager.token().await.unwrap();
    assert_eq!(token.access_token.expose(), "at-1");
    assert_eq!(server.requests.load(Ordering::SeqCst), 2);
    assert_eq!(
        store.load().unwrap().unwrap().refresh_token.as_deref(),
        Some("rt-1")
    );
}

#[tokio::test]
async fn invalid_grant_rereads_the_store() {
    // Another process already rotated rt-0 into rt-1 and saved it; its access token is due.
    let server = serve(Duration::ZERO, rotating()).await;
    let other = refresh_manager(&server, Some("rt-0"), None).unwrap();
    let theirs = other.token().await.unwrap();
    let store = Arc::new(MemoryStore::default());
    let mut saved = theirs.to_stored();
    saved.expires_at = Some(saved.obtained_at);
    store.save(&saved).unwrap();

    let manager = refresh_manager(&server, Some("rt-0"), Some(store.clone())).unwrap();
    let token = manager.token().await.unwrap();
    assert_eq!(token.access_token.expose(), "at-2");
    let forms = server.forms.lock().unwrap();
    let used: Vec<_> = forms.iter().map(|f| f["refresh_token"].as_str()).collect();
    assert_eq!(used, ["rt-0", "rt-0", "rt-1"]);
    assert_eq!(
        store.load().unwrap().unwrap().refresh_token.as_deref(),
        Some("rt-2")
    );
}

#[tokio::test]
async fn invalid_grant_without_a_newer_token_requires_reauthorization() {
    let server = serve(Duration::ZERO, Arc::new(|_, _| invalid_grant())).await;
    let store = Arc::new(MemoryStore::default());
    let manager = refresh_manager(&server, Some("dead"), Some(store)).unwrap();
    let err = manager.token().await.unwrap_err();
    assert!(matches!(err, Error::ReauthorizationRequired(_)), "{err:?}");
    assert!(err.to_string().contains("Token has been revoked"), "{err}");
    assert!(!err.to_string().contains("dead"), "{err}");
    assert_eq!(server.requests.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn resumes_from_the_store_without_a_request() {
    let server = serve(Duration::ZERO, rotating()).await;
    let store = Arc::new(MemoryStore::default());
    store
        .save(
            &Token::received(
                "Bearer".into(),
                Secret::new("at-saved"),
                Some(Secret::new("rt-saved")),
                Some(3600),
            )
            .to_stored(),
        )
        .unwrap();
    let manager = refresh_manager(&server, None, Some(store)).unwrap();
    assert_eq!(
        manager.token().await.unwrap().access_token.expose(),
        "at-saved"
    );
    assert_eq!(server.requests.load(Ordering::SeqCst), 0);
    assert!(refresh_manager(&server, None, None).is_err());
}

#[tokio::test]
async fn success_without_access_token_is_not_a_token() {
    let server = serve(
        Duration::ZERO,
        Arc::new(|_, _| Reply::Json(200, r#"{"status":"ok"}"#.into())),
    )
    .await;
    let manager = cc_manager(&server, DEFAULT_LEEWAY);
    let err = manager.token().await.unwrap_err();
    assert!(matches!(err, Error::Decode { .. }), "{err:?}");
}

#[tokio::test]
async fn without_transport_or_user_agent_it_says_what_to_do() {
    let manager =
        TokenManager::client_credentials("app".into(), Secret::new("s"), ManagerOptions::default())
            .unwrap();
    let err = manager.token().await.unwrap_err();
    assert!(err.to_string().contains("User-Agent"), "{err}");
    assert!(!format!("{manager:?}").contains("\"s\""));
}

#[test]
fn token_form_goes_to_the_token_endpoint() {
    let server_url = "http://127.0.0.1:9";
    let mut config = ClientConfig::new("T/1 (t@example.org)");
    config.auth_url = server_url.into();
    let client = Client::new(config, None).unwrap();
    let request = client.prepare_token_request(&Query::new()).unwrap();
    assert_eq!(
        request.url.as_str(),
        "http://127.0.0.1:9/w/rest.php/oauth2/access_token"
    );
}
