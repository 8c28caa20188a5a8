//! What the examples that measure a build report of their own process (Linux `/proc`): its
//! CPU time and memory. The catalog build example of the translation crate reads this file
//! too.

#![allow(dead_code)]

/// User + system CPU time of the process so far, all threads (`/proc/self/stat`, in the
/// kernel's USER_HZ ticks of 1/100 s).
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the command name (which ends with the last `)`): utime and stime are
    // the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// A `/proc/self/status` figure in KiB (`VmHWM:`, `VmRSS:`; 0 where there is none).
pub fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
