//! Rust log records (request attempts, retries, token renewals) delivered to Python's
//! `logging`.
//!
//! Asking Python whether a level is enabled needs the interpreter, which the I/O threads do
//! not hold. So each public call reads the effective level of the `wikisuggest.http` logger on
//! the calling thread (which holds the interpreter anyway) and stores it; the I/O threads only
//! read that atomic, and attach to the interpreter only to emit records that are enabled.
//! Changing a log level therefore takes effect from the next call.

use std::sync::atomic::{AtomicUsize, Ordering};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

const LOGGER_NAME: &str = "wikisuggest.http";

static LEVEL: AtomicUsize = AtomicUsize::new(0);
static LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

struct PythonLogging;

impl log::Log for PythonLogging {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        // Only our own records: the HTTP stack's internals are not the user's business.
        metadata.target().starts_with("wikisuggest")
            && (metadata.level() as usize) <= LEVEL.load(Ordering::Relaxed)
    }

    fn log(&self, record: &log::Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let message = record.args().to_string();
        let level = python_level(record.level());
        let name = record.target().to_owned();
        Python::attach(|py| {
            let logger = py
                .import("logging")
                .and_then(|logging| logging.call_method1("getLogger", (name,)));
            if let Ok(logger) = logger {
                // A failing handler must not take the request down with it.
                let _ = logger.call_method1("log", (level, message));
            }
        });
    }

    fn flush(&self) {}
}

fn logger(py: Python<'_>) -> PyResult<&Py<PyAny>> {
    LOGGER.get_or_try_init(py, || {
        let logging = py.import("logging")?;
        Ok(logging.call_method1("getLogger", (LOGGER_NAME,))?.unbind())
    })
}

fn python_level(level: log::Level) -> u32 {
    match level {
        log::Level::Error => 40,
        log::Level::Warn => 30,
        log::Level::Info => 20,
        log::Level::Debug | log::Level::Trace => 10,
    }
}

pub fn install() {
    static BRIDGE: PythonLogging = PythonLogging;
    if log::set_logger(&BRIDGE).is_ok() {
        log::set_max_level(log::LevelFilter::Trace);
    }
}

/// Read the effective level of the `wikisuggest.http` logger (all our targets share it);
/// called at every public entry.
///
/// # Errors
/// The exception of a signal handler that ran while the logger's Python code did (Ctrl-C's
/// `KeyboardInterrupt`): it belongs to the caller, which must not go on as if the key had not
/// been pressed. Any other failure leaves the level as it was.
pub fn refresh(py: Python<'_>) -> PyResult<()> {
    let level = logger(py).and_then(|logger| {
        logger
            .call_method0(py, "getEffectiveLevel")?
            .extract::<u32>(py)
    });
    let level = match level {
        Ok(level) => level,
        Err(err) if !err.is_instance_of::<pyo3::exceptions::PyException>(py) => return Err(err),
        Err(_) => return Ok(()),
    };
    let filter = match level {
        0..=10 => log::LevelFilter::Debug,
        11..=20 => log::LevelFilter::Info,
        21..=30 => log::LevelFilter::Warn,
        31..=40 => log::LevelFilter::Error,
        _ => log::LevelFilter::Off,
    };
    LEVEL.store(filter as usize, Ordering::Relaxed);
    Ok(())
}
