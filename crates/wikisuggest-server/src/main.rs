//! `wikisuggest-server`: the reference server as a plain binary (`cargo run -p
//! wikisuggest-server -- --port 0 --datasets DIR …`). The same options as `wikisuggest serve`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use wikisuggest_server::{Server, ServerConfig, TranslationShape};

const USAGE: &str = "usage: wikisuggest-server [--host IP] [--port N] [--datasets DIR] \
[--pages DUMP_OR_DIR] [--wiki-api WIKI_ID=API_URL]... [--rules WIKI_ID=RULE_FILE]... [--translation-catalog [WIKI=]DIR]... [--translation-shape array|envelope] [--clients FILE] [--seed N] [--token-ttl SECONDS] \
[--rate-limit PER_MINUTE] [--anonymous-rate-limit PER_MINUTE] [--max-connections N] \
[--max-connections-per-address N] [--link-workers N] [--link-time-budget SECONDS]

SIGHUP reopens the link datasets whose files were replaced (each verified, then swapped in).";

/// One JSON object per line on stderr; messages never carry secrets.
struct JsonLogger;

impl log::Log for JsonLogger {
    fn enabled(&self, metadata: &log::Metadata) -> bool {
        metadata.level() <= log::Level::Info
    }

    fn log(&self, record: &log::Record) {
        if self.enabled(record.metadata()) {
            let line = serde_json::json!({
                "level": record.level().as_str(),
                "target": record.target(),
                "message": record.args().to_string(),
            });
            let _ = writeln!(std::io::stderr(), "{line}");
        }
    }

    fn flush(&self) {}
}

/// `WIKI=PATH` or `PATH`: a translation catalog folder (or a folder of them), with the wiki
/// it must be the catalog of.
fn catalog_spec(spec: &str) -> (Option<String>, PathBuf) {
    match spec.split_once('=') {
        Some((wiki, path))
            if !wiki.is_empty()
                && wiki
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') =>
        {
            (Some(wiki.to_owned()), PathBuf::from(path))
        }
        _ => (None, PathBuf::from(spec)),
    }
}

fn parse(args: &[String]) -> Result<ServerConfig, String> {
    let mut config = ServerConfig::default();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: &String| {
            v.parse::<u64>()
                .map_err(|_| format!("{flag}: not a number: {v}"))
        };
        match flag.as_str() {
            "--host" => config.host = value()?.parse().map_err(|_| "--host: not an IP")?,
            "--port" => config.port = value()?.parse().map_err(|_| "--port: not a port")?,
            "--datasets" => config.datasets = Some(PathBuf::from(value()?)),
            "--pages" => config.pages = Some(PathBuf::from(value()?)),
            "--wiki-api" => {
                let spec = value()?;
                let (wiki, url) = spec
                    .split_once('=')
                    .ok_or_else(|| format!("--wiki-api: expected WIKI_ID=URL, got {spec}"))?;
                config.wiki_apis.push((wiki.to_owned(), url.to_owned()));
            }
            "--rules" => {
                let spec = value()?;
                let (wiki, path) = spec
                    .split_once('=')
                    .ok_or_else(|| format!("--rules: expected WIKI_ID=RULE_FILE, got {spec}"))?;
                config.rules.push((wiki.to_owned(), PathBuf::from(path)));
            }
            "--translation-catalog" | "--translation" => {
                config.translation_catalogs.push(catalog_spec(value()?));
            }
            "--translation-shape" => {
                config.translation_shape = TranslationShape::parse(value()?)
                    .ok_or("--translation-shape: array or envelope")?;
            }
            "--clients" => config.clients = Some(PathBuf::from(value()?)),
            "--seed" => config.seed = Some(number(value()?)?),
            "--token-ttl" => config.access_token_ttl = Duration::from_secs(number(value()?)?),
            "--rate-limit" => {
                config.rate_limits.authenticated_per_minute =
                    u32::try_from(number(value()?)?).map_err(|_| "--rate-limit: too large")?;
            }
            "--max-connections" => {
                config.max_connections = usize::try_from(number(value()?)?)
                    .map_err(|_| "--max-connections: too large")?;
            }
            "--max-connections-per-address" => {
                config.max_connections_per_address = usize::try_from(number(value()?)?)
                    .map_err(|_| "--max-connections-per-address: too large")?;
            }
            "--link-workers" => {
                config.link_workers =
                    usize::try_from(number(value()?)?).map_err(|_| "--link-workers: too large")?;
            }
            "--link-time-budget" => {
                let v = value()?;
                config.link_time_budget = v
                    .parse::<f64>()
                    .ok()
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                    .filter(|d| !d.is_zero())
                    .ok_or_else(|| format!("--link-time-budget: not a positive number: {v}"))?;
            }
            "--anonymous-rate-limit" => {
                config.rate_limits.anonymous_per_minute = u32::try_from(number(value()?)?)
                    .map_err(|_| "--anonymous-rate-limit: too large")?;
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(config)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let _ = log::set_logger(&JsonLogger).map(|()| log::set_max_level(log::LevelFilter::Info));
    let config = match parse(&args) {
        Ok(config) => config,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    // A server process sizes its connection cap from the descriptor limit: take what the
    // hard limit allows.
    let _ = wikisuggest_server::connections::raise_descriptor_limit();
    let result = runtime.block_on(async {
        let server = Server::bind(config).await?;
        #[cfg(unix)]
        server.reload_on_sighup()?;
        // Scripts read the bound address from the first line of stdout.
        println!("http://{}", server.local_addr());
        server
            .run_until(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
