//! Read-only file mappings that survive their file being truncated under them.
//!
//! When another process truncates a memory-mapped file, the next read of a mapped page past
//! the new end raises SIGBUS, whose default action kills the process: one `cp new old` over
//! a dataset in use would take a server down. A [`GuardedMap`] turns that fault into a
//! short read and a flag instead:
//!
//! - Every live mapping is listed in a fixed table ([`SLOTS`] entries) that a SIGBUS handler
//!   reads without locks (each entry under a sequence counter).
//! - The handler, for a fault the kernel raised at an address inside a listed mapping, maps
//!   anonymous zero pages over that mapping from the faulting page to its end
//!   (`MAP_FIXED`, which replaces the file pages in one step), sets the mapping's `faulted`
//!   flag and returns: the faulting read runs again and reads zeros. Pages before the fault
//!   keep the file's bytes; everything past it reads as zeros from then on, for every thread.
//! - Its reader checks the flag ([`GuardedMap::faulted`]) after each page, and refuses the
//!   page (whose look-ups may have read zeros) with a typed error. Zero bytes are a valid
//!   input to every accessor (empty hash slots, empty strings): nothing loops or panics on
//!   them in between.
//! - Any other SIGBUS (another mapping's, or one sent with `kill`) goes to the handler that
//!   was installed before this one, with its own calling convention, or gets the default
//!   action.
//!
//! Why this is sound: a fault inside a listed mapping comes from a thread reading it, which
//! holds a borrow of the [`GuardedMap`]; the mapping therefore stays mapped and listed until
//! the handler returns, and its range cannot have been handed to another mapping. The
//! handler calls only `mmap` and atomics (`mmap` is a plain system call on Linux and macOS,
//! safe in a handler although POSIX does not list it), and never allocates or locks.
//!
//! A SIGBUS handler installed by someone else *after* the first mapping (for example
//! Python's `faulthandler.enable()` at run time) takes precedence over this one until the
//! next mapping is made, which puts this handler back in front, chaining to that one.
//! On platforms without the guard (not Linux or macOS), the mapping is a plain one.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// How many guarded mappings may exist at once (one per large dataset file open). Past
/// that, opening another large file fails with an error rather than mapping it unguarded.
pub(crate) const SLOTS: usize = 1024;

/// One entry of the table of live mappings.
struct Slot {
    /// Odd while the range is being written; a reader that sees it change ignores the entry.
    sequence: AtomicUsize,
    start: AtomicUsize,
    end: AtomicUsize,
    /// Whether a mapping owns the entry.
    taken: AtomicBool,
    /// Set by the handler once part of the mapping was replaced by zero pages.
    faulted: AtomicBool,
}

impl Slot {
    const fn new() -> Self {
        Self {
            sequence: AtomicUsize::new(0),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            taken: AtomicBool::new(false),
            faulted: AtomicBool::new(false),
        }
    }

    /// The mapped range, if the entry holds one and was not being changed while read.
    #[cfg_attr(not(any(target_os = "linux", target_os = "macos")), allow(dead_code))]
    fn range(&self) -> Option<(usize, usize)> {
        let before = self.sequence.load(Ordering::SeqCst);
        if before % 2 == 1 {
            return None;
        }
        let (start, end) = (
            self.start.load(Ordering::SeqCst),
            self.end.load(Ordering::SeqCst),
        );
        (self.sequence.load(Ordering::SeqCst) == before && start < end).then_some((start, end))
    }

    fn set_range(&self, start: usize, end: usize) {
        self.sequence.fetch_add(1, Ordering::SeqCst);
        self.start.store(start, Ordering::SeqCst);
        self.end.store(end, Ordering::SeqCst);
        self.sequence.fetch_add(1, Ordering::SeqCst);
    }
}

static TABLE: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];

/// A read-only shared mapping of a whole file, listed for the SIGBUS handler while it
/// lives.
pub(crate) struct GuardedMap {
    map: memmap2::Mmap,
    slot: Option<&'static Slot>,
}

impl GuardedMap {
    /// Maps `file` whole.
    pub(crate) fn map(file: &File) -> std::io::Result<Self> {
        // SAFETY: the map is read-only. The file may be changed by another process while
        // mapped: a truncation is caught by the SIGBUS handler (see the module comment),
        // and the bytes read are only ever used through bounds-checked accessors, so a
        // change yields wrong bytes at worst, which the reader's checks after each page
        // (this flag, the file's length and modification time) refuse.
        let map = unsafe { memmap2::Mmap::map(file) }?;
        let slot = if map.is_empty() {
            None
        } else {
            Some(register(map.as_ptr() as usize, map.len())?)
        };
        Ok(Self { map, slot })
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// Whether a read past the file's end was answered with zeros: the file was truncated
    /// while mapped, and what was read since may be wrong.
    #[inline]
    pub(crate) fn faulted(&self) -> bool {
        self.slot.is_some_and(|s| s.faulted.load(Ordering::Acquire))
    }
}

impl Drop for GuardedMap {
    fn drop(&mut self) {
        // Unlisted before `map` is unmapped (fields drop after this).
        if let Some(slot) = self.slot.take() {
            slot.set_range(0, 0);
            slot.faulted.store(false, Ordering::SeqCst);
            slot.taken.store(false, Ordering::SeqCst);
        }
    }
}

/// Lists `[start, start + len)` and makes sure the handler is installed.
fn register(start: usize, len: usize) -> std::io::Result<&'static Slot> {
    handler::install()?;
    let slot = TABLE
        .iter()
        .find(|s| {
            s.taken
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "more than {SLOTS} large dataset files are mapped at once"
            ))
        })?;
    slot.faulted.store(false, Ordering::SeqCst);
    slot.set_range(start, start.saturating_add(len));
    Ok(slot)
}

#[cfg(any(target_os = "linux", target_os = "macos"))]
mod handler {
    use std::ffi::{c_int, c_void};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

    use super::TABLE;

    /// The action that was installed before this handler (a leaked box; one per install).
    static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());
    static PAGE: AtomicUsize = AtomicUsize::new(4096);
    static INSTALLING: Mutex<()> = Mutex::new(());

    fn ours() -> usize {
        on_sigbus as *const () as usize
    }

    /// Installs the handler unless it is the current one, remembering the current one to
    /// chain to.
    pub(super) fn install() -> std::io::Result<()> {
        let _guard = INSTALLING.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: sigaction with a null new action only reads the current one into a
        // zeroed struct of the right type.
        let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut current) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if current.sa_sigaction == ours() {
            return Ok(());
        }
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if let Ok(page) = usize::try_from(page)
            && page.is_power_of_two()
        {
            PAGE.store(page, Ordering::SeqCst);
        }
        // Published before the handler can run, so it always has something to chain to.
        PREVIOUS.store(Box::into_raw(Box::new(current)), Ordering::SeqCst);
        // SAFETY: a zeroed sigaction is valid; the mask is emptied with sigemptyset and
        // the handler has the three-argument signature SA_SIGINFO asks for.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = ours();
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        if unsafe { libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    extern "C" fn on_sigbus(signal: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
        // SAFETY: with SA_SIGINFO the kernel passes a valid siginfo.
        let (code, address) = unsafe { ((*info).si_code, (*info).si_addr() as usize) };
        // A positive code: raised by the kernel for a memory access (not sent by kill).
        if code > 0 && repair(address) {
            return;
        }
        // SAFETY: the arguments are the ones this handler received.
        unsafe { chain(signal, info, context, code) };
    }

    /// Zero pages over the listed mapping holding `address`, from its page to the end.
    fn repair(address: usize) -> bool {
        let page = PAGE.load(Ordering::Relaxed);
        for slot in &TABLE {
            let Some((start, end)) = slot.range() else {
                continue;
            };
            if !(start..end).contains(&address) {
                continue;
            }
            let from = address & !(page - 1);
            let to = end.div_ceil(page) * page;
            // SAFETY: `[from, to)` lies inside a live mapping this module listed (the
            // faulting thread is reading it, so it cannot be unmapped meanwhile): replacing
            // its pages touches no other memory.
            let mapped = unsafe {
                libc::mmap(
                    from as *mut c_void,
                    to - from,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANON | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if mapped == libc::MAP_FAILED {
                return false;
            }
            slot.faulted.store(true, Ordering::Release);
            return true;
        }
        false
    }

    /// Hands the signal to the previous action.
    unsafe fn chain(signal: c_int, info: *mut libc::siginfo_t, context: *mut c_void, code: c_int) {
        let previous = PREVIOUS.load(Ordering::SeqCst);
        // SAFETY: PREVIOUS is set before the handler is installed and never freed.
        let Some(previous) = (unsafe { previous.as_ref() }) else {
            return default_action(signal, code);
        };
        let handler = previous.sa_sigaction;
        if handler == libc::SIG_IGN && code <= 0 {
            return;
        }
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            return default_action(signal, code);
        }
        if previous.sa_flags & libc::SA_SIGINFO != 0 {
            // SAFETY: with SA_SIGINFO the stored handler has this signature.
            let handler: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
                unsafe { std::mem::transmute(handler) };
            handler(signal, info, context);
        } else {
            // SAFETY: without SA_SIGINFO the stored handler takes the signal number.
            let handler: extern "C" fn(c_int) = unsafe { std::mem::transmute(handler) };
            handler(signal);
        }
    }

    /// The default action: for a fault, on the faulting access again once this handler
    /// returns; for a sent signal, now.
    fn default_action(signal: c_int, code: c_int) {
        // SAFETY: resetting a signal to its default action and raising it are
        // async-signal-safe.
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            if code <= 0 {
                libc::raise(signal);
            }
        }
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod handler {
    /// Nothing to install: Windows refuses to truncate a mapped file.
    pub(super) fn install() -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(all(test, any(target_os = "linux", target_os = "macos")))]
mod tests {
    // Test support code: failing loudly is the point.
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_truncated_file_reads_zeros_and_sets_the_flag() {
        let dir = std::env::temp_dir().join(format!("ws-guard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("mapped");
        let page = 4096 * 16;
        std::fs::write(&path, vec![7u8; page * 4]).unwrap();
        let file = File::open(&path).unwrap();
        let map = GuardedMap::map(&file).unwrap();
        assert_eq!(map.bytes()[page * 3], 7);
        assert!(!map.faulted());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(page as u64)
            .unwrap();
        // Past the new end: zeros, not a signal; before it: the file's bytes.
        let tail = std::hint::black_box(&map.bytes()[page * 2..]);
        assert!(tail.iter().all(|&b| b == 0));
        assert!(map.faulted());
        assert_eq!(map.bytes()[page - 1], 7);
        // Other mappings are unaffected.
        std::fs::write(dir.join("other"), vec![9u8; page]).unwrap();
        let other = GuardedMap::map(&File::open(dir.join("other")).unwrap()).unwrap();
        assert!(!other.faulted() && other.bytes().iter().all(|&b| b == 9));
        drop(map);
        drop(other);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
