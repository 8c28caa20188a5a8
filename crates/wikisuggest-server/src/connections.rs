//! The table of open connections: who is idle and since when, how many each client address
//! holds, and which connection gives up its place when a new one needs it.
//!
//! A connection is *busy* while a request is in flight on it (from its complete head to the
//! last byte of its answer) and *idle* otherwise: before its first request, and between
//! requests on a kept-alive connection. When the server is full, the connection idle the
//! longest is closed to make room, so neither half-sent requests (slowloris) nor clients
//! that keep connections alive and ask now and then can hold every place. A client address
//! at its own cap makes room among its own connections only.
//!
//! Not every idle connection is fair game, though:
//! - one whose client has sent bytes the server has not read yet is waiting for the
//!   server, not the other way round (in a burst, connections are accepted faster than
//!   their requests are read): it is skipped;
//! - one accepted less than [`Caps::fresh_grace`] ago has not had the time to send its
//!   request, and one answered less than [`Caps::answered_grace`] ago is likely to ask
//!   again: they are skipped too.
//!
//! When no connection can make room, the newcomer waits for a place (a connection ending, or
//! one becoming fair game) for a bounded time ([`Connections::admit_within`]), then is
//! refused (with a 503 the accept loop writes).

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The caps of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Connections open at once.
    pub total: usize,
    /// Connections one client address (an IPv6 /64) holds at once.
    pub per_address: usize,
    /// How long a connection that has not sent a request yet is left alone.
    pub fresh_grace: Duration,
    /// How long a connection that was just answered is left alone.
    pub answered_grace: Duration,
}

/// The default [`Caps::fresh_grace`].
pub const FRESH_GRACE: Duration = Duration::from_millis(100);
/// The default [`Caps::answered_grace`].
pub const ANSWERED_GRACE: Duration = Duration::from_secs(1);
/// Idle connections looked at, idlest first, for one that may make room.
const CANDIDATES: usize = 64;

/// What a connection and the table share.
#[derive(Default)]
pub struct Shared {
    in_flight: AtomicU32,
    evicted: AtomicBool,
    evict: Notify,
}

impl Shared {
    /// Requests in flight on this connection.
    pub fn in_flight(&self) -> u32 {
        self.in_flight.load(Ordering::Acquire)
    }

    /// Completes once the table asked this connection to close (at once if it already did).
    pub async fn evicted(&self) {
        while !self.evicted.load(Ordering::Acquire) {
            self.evict.notified().await;
        }
    }
}

struct Open {
    address: IpAddr,
    /// The tick at which it became idle; `None` while busy.
    idle_since: Option<u64>,
    /// When it became idle.
    idle_at: Instant,
    /// Whether it was ever answered.
    answered: bool,
    /// Its socket, to ask whether the client sent bytes not read yet. Valid while the
    /// connection is in the table: the connection leaves the table before it is closed.
    socket: Option<Socket>,
    shared: Arc<Shared>,
}

/// What the table keeps of a connection's socket.
#[cfg(unix)]
pub type Socket = std::os::fd::RawFd;
#[cfg(not(unix))]
pub type Socket = ();

/// Whether the client sent bytes the server has not read yet.
fn unread(socket: Option<Socket>) -> bool {
    #[cfg(unix)]
    if let Some(fd) = socket {
        let mut pending: libc::c_int = 0;
        // SAFETY: FIONREAD writes the number of readable bytes into the int it is given;
        // `fd` is a socket of a connection still in the table (see `Open::socket`).
        let asked = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut pending) };
        return asked == 0 && pending > 0;
    }
    let _ = socket;
    false
}

#[derive(Default)]
struct Table {
    next_id: u64,
    /// Orders the idle connections: a smaller tick has been idle longer.
    tick: u64,
    open: HashMap<u64, Open>,
    idle: BTreeSet<(u64, u64)>,
    idle_by_address: BTreeSet<(IpAddr, u64, u64)>,
    per_address: HashMap<IpAddr, usize>,
}

impl Table {
    fn set_idle(&mut self, id: u64) {
        self.tick += 1;
        let tick = self.tick;
        if let Some(open) = self.open.get_mut(&id)
            && open.idle_since.is_none()
        {
            open.idle_since = Some(tick);
            open.idle_at = Instant::now();
            self.idle.insert((tick, id));
            self.idle_by_address.insert((open.address, tick, id));
        }
    }

    fn set_busy(&mut self, id: u64) {
        if let Some(open) = self.open.get_mut(&id)
            && let Some(tick) = open.idle_since.take()
        {
            self.idle.remove(&(tick, id));
            self.idle_by_address.remove(&(open.address, tick, id));
        }
    }

    /// Takes `id` out of the table; its address's count goes down.
    fn remove(&mut self, id: u64) -> Option<Open> {
        let open = self.open.remove(&id)?;
        if let Some(tick) = open.idle_since {
            self.idle.remove(&(tick, id));
            self.idle_by_address.remove(&(open.address, tick, id));
        }
        if let Some(count) = self.per_address.get_mut(&open.address) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_address.remove(&open.address);
            }
        }
        Some(open)
    }

    /// Closes connection `id`: out of the table now, its task told to end.
    fn evict(&mut self, id: u64) -> bool {
        match self.remove(id) {
            Some(open) => {
                open.shared.evicted.store(true, Ordering::Release);
                open.shared.evict.notify_one();
                true
            }
            None => false,
        }
    }

    /// Evicts the connection idle the longest (of `address` only when given) that may make
    /// room: past its grace period, with no bytes from its client waiting to be read.
    fn evict_idlest(&mut self, address: Option<IpAddr>, caps: &Caps) -> bool {
        let candidates: Vec<u64> = match address {
            None => self
                .idle
                .iter()
                .take(CANDIDATES)
                .map(|&(_, id)| id)
                .collect(),
            Some(address) => self
                .idle_by_address
                .range((address, 0, 0)..=(address, u64::MAX, u64::MAX))
                .take(CANDIDATES)
                .map(|&(_, _, id)| id)
                .collect(),
        };
        let fair_game = |open: &Open| {
            let grace = if open.answered {
                caps.answered_grace
            } else {
                caps.fresh_grace
            };
            open.idle_at.elapsed() >= grace && !unread(open.socket)
        };
        let victim = candidates
            .into_iter()
            .find(|id| self.open.get(id).is_some_and(fair_game));
        victim.is_some_and(|id| self.evict(id))
    }
}

/// The open connections of one listener.
pub struct Connections {
    caps: Caps,
    table: Mutex<Table>,
    /// Woken when a connection leaves the table.
    freed: Notify,
}

/// The place a connection holds in the table; dropping it gives the place back.
pub struct Ticket {
    connections: Arc<Connections>,
    id: u64,
    shared: Arc<Shared>,
}

impl Connections {
    pub fn new(caps: Caps) -> Arc<Self> {
        Arc::new(Self {
            caps: Caps {
                total: caps.total.max(1),
                per_address: caps.per_address.max(1),
                ..caps
            },
            table: Mutex::new(Table::default()),
            freed: Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for a new connection from `address`, making room by closing the connection
    /// idle the longest (this address's own when it is at its cap); `None` when no
    /// connection can make room (each is busy or idle for less than the grace period).
    pub fn admit(self: &Arc<Self>, address: IpAddr, socket: Option<Socket>) -> Option<Ticket> {
        let address = client_key(address);
        let caps = &self.caps;
        let mut table = self.lock();
        let own = table.per_address.get(&address).copied().unwrap_or(0);
        if own >= caps.per_address {
            if !table.evict_idlest(Some(address), caps) {
                return None;
            }
        } else if table.open.len() >= caps.total && !table.evict_idlest(None, caps) {
            return None;
        }
        let id = table.next_id;
        table.next_id += 1;
        let shared = Arc::new(Shared::default());
        table.open.insert(
            id,
            Open {
                address,
                idle_since: None,
                idle_at: Instant::now(),
                answered: false,
                socket,
                shared: shared.clone(),
            },
        );
        *table.per_address.entry(address).or_default() += 1;
        // Idle until its first request head is complete.
        table.set_idle(id);
        Some(Ticket {
            connections: self.clone(),
            id,
            shared,
        })
    }

    /// [`Connections::admit`], waiting up to `wait` for a place when there is none.
    pub async fn admit_within(
        self: &Arc<Self>,
        address: IpAddr,
        socket: Option<Socket>,
        wait: Duration,
    ) -> Option<Ticket> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before trying, so a place freed meanwhile is not missed.
            let freed = self.freed.notified();
            if let Some(ticket) = self.admit(address, socket) {
                return Some(ticket);
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return None;
            }
            // Woken by a connection ending, or after a while for one passing the grace
            // period.
            let step = (deadline - now).min(RECHECK);
            let _ = tokio::time::timeout(step, freed).await;
        }
    }

    /// Connections open (those asked to close no longer count).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().open.len()
    }
}

/// How often a waiting newcomer looks again for a connection past its grace period.
const RECHECK: Duration = Duration::from_millis(50);

impl Ticket {
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// A request head is complete: busy until [`Ticket::finished`] is called as often.
    pub fn started(&self) {
        if self.shared.in_flight.fetch_add(1, Ordering::AcqRel) == 0 {
            self.connections.lock().set_busy(self.id);
        }
    }

    /// The last byte of an answer was written (or the answer was dropped).
    pub fn finished(&self) {
        let before = self
            .shared
            .in_flight
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        if before == Ok(1) {
            let mut table = self.connections.lock();
            if let Some(open) = table.open.get_mut(&self.id) {
                open.answered = true;
            }
            table.set_idle(self.id);
        }
    }

    /// Leaves the table (before the connection's socket is closed); idempotent.
    pub fn leave(&self) {
        let removed = self.connections.lock().remove(self.id).is_some();
        // An evicted connection's place was taken by the newcomer that evicted it.
        if removed {
            self.connections.freed.notify_waiters();
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.leave();
    }
}

/// What one client is: its IPv4 address, or the /64 of its IPv6 address (one host or
/// network commonly holds a whole /64). IPv4-mapped IPv6 addresses count as IPv4.
pub fn client_key(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V6(v6) => {
            let bits = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(bits.into())
        }
        v4 => v4,
    }
}

/// Refusals (503 answers to connections that found no place) being written at once; past
/// that, a refused connection is closed unanswered.
pub const MAX_REFUSING: usize = 64;

/// The soft limit on open file descriptors, where the platform has one.
pub fn descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            #[allow(clippy::unnecessary_cast)] // `rlim_t` is not u64 everywhere
            #[allow(clippy::unnecessary_cast)] // `rlim_t` is not u64 everywhere
            return Some(limit.rlim_cur as u64);
        }
    }
    None
}

/// Raises the soft descriptor limit to the hard one (what a server process wants; a
/// library inside another program leaves its limits alone). Returns the new soft limit.
pub fn raise_descriptor_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit read and write the struct they are given.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
                return None;
            }
            if limit.rlim_cur < limit.rlim_max {
                let raised = libc::rlimit {
                    rlim_cur: limit.rlim_max,
                    rlim_max: limit.rlim_max,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                    limit = raised;
                }
            }
        }
        #[allow(clippy::unnecessary_cast)] // `rlim_t` is not u64 everywhere
        return Some(limit.rlim_cur as u64);
    }
    #[allow(unreachable_code)]
    None
}

/// Connections the server holds at most: `configured` (0: as many as the descriptor limit
/// allows, up to [`AUTO_MAX_CONNECTIONS`]), never more than the descriptor limit allows.
/// What it allows: seven eighths of the descriptors left after [`RESERVED_DESCRIPTORS`],
/// so that newcomers waiting for a place ([`waiting_cap`]) fit in the last eighth.
pub fn connection_cap(configured: usize, descriptors: Option<u64>) -> usize {
    let allowed = descriptors.map(|limit| {
        let spare = limit.saturating_sub(RESERVED_DESCRIPTORS) / 8 * 7;
        usize::try_from(spare).unwrap_or(usize::MAX).max(1)
    });
    match (configured, allowed) {
        (0, Some(allowed)) => allowed.min(AUTO_MAX_CONNECTIONS),
        (0, None) => DEFAULT_MAX_CONNECTIONS,
        (n, Some(allowed)) if n > allowed => {
            log::warn!(
                "max_connections {n} exceeds what the descriptor limit allows; using {allowed} \
                 (raise `ulimit -n` for more)"
            );
            allowed
        }
        (n, _) => n,
    }
}

/// Without a descriptor limit to size from.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The most connections sized from the descriptor limit (each costs some memory).
pub const AUTO_MAX_CONNECTIONS: usize = 16_384;

/// Descriptors kept for everything but client connections: dataset files, upstream wikis,
/// refusals being written ([`MAX_REFUSING`]), logs and the process around the server.
pub const RESERVED_DESCRIPTORS: u64 = 128 + MAX_REFUSING as u64;

/// Newcomers that may wait for a place at once: an eighth of the cap, at least 64. Past
/// that, a newcomer that finds no place is refused at once.
pub fn waiting_cap(total: usize) -> usize {
    (total / 8).max(64)
}

/// Connections one client address holds at most: `configured`, or (0) an eighth of the cap
/// and at least 8.
pub fn per_address_cap(configured: usize, total: usize) -> usize {
    match configured {
        0 => (total / 8).max(8).min(total),
        n => n.min(total),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    const NO_GRACE: Caps = Caps {
        total: 1,
        per_address: 1,
        fresh_grace: Duration::ZERO,
        answered_grace: Duration::ZERO,
    };

    #[test]
    fn the_connection_idle_longest_makes_room() {
        let table = Connections::new(Caps {
            total: 3,
            per_address: 3,
            ..NO_GRACE
        });
        let a = table.admit(ip(1), None).unwrap();
        let b = table.admit(ip(2), None).unwrap();
        let c = table.admit(ip(3), None).unwrap();
        // `a` asks something: busy. `b` is now the idlest.
        a.started();
        let d = table.admit(ip(4), None).unwrap();
        assert!(b.shared().evicted.load(Ordering::Acquire));
        assert!(!a.shared().evicted.load(Ordering::Acquire));
        // `a` is idle again, after `c` and `d` became idle: `c` goes next.
        a.finished();
        let _e = table.admit(ip(5), None).unwrap();
        assert!(c.shared().evicted.load(Ordering::Acquire));
        assert!(!d.shared().evicted.load(Ordering::Acquire));
        assert_eq!(table.len(), 3);
        drop(b);
        drop(c);
        assert_eq!(table.len(), 3);
    }

    #[test]
    fn busy_connections_are_never_closed_a_newcomer_is_refused() {
        let table = Connections::new(Caps {
            total: 2,
            per_address: 2,
            ..NO_GRACE
        });
        let a = table.admit(ip(1), None).unwrap();
        let b = table.admit(ip(2), None).unwrap();
        a.started();
        b.started();
        assert!(table.admit(ip(3), None).is_none());
        b.finished();
        assert!(table.admit(ip(3), None).is_some());
        assert!(b.shared().evicted.load(Ordering::Acquire));
    }

    #[test]
    fn an_address_at_its_cap_makes_room_among_its_own() {
        let table = Connections::new(Caps {
            total: 10,
            per_address: 2,
            ..NO_GRACE
        });
        let other = table.admit(ip(9), None).unwrap();
        let a1 = table.admit(ip(1), None).unwrap();
        let a2 = table.admit(ip(1), None).unwrap();
        // `other` is idle longest, but ip 1 is at its cap: its own idlest goes.
        let _a3 = table.admit(ip(1), None).unwrap();
        assert!(a1.shared().evicted.load(Ordering::Acquire));
        assert!(!other.shared().evicted.load(Ordering::Acquire));
        a2.started();
        // Its other connection is busy now, and the new one idle: that one goes.
        let _a4 = table.admit(ip(1), None).unwrap();
        assert!(!a2.shared().evicted.load(Ordering::Acquire));
        a2.finished();
    }

    #[test]
    fn the_cap_follows_the_descriptor_limit() {
        // 1024 descriptors: 192 kept aside, seven eighths of the 832 left.
        assert_eq!(connection_cap(0, Some(1024)), 728);
        assert_eq!(waiting_cap(728), 91);
        assert_eq!(waiting_cap(8), 64);
        assert!(728 + 91 + RESERVED_DESCRIPTORS as usize <= 1024);
        assert_eq!(connection_cap(0, Some(1_048_576)), AUTO_MAX_CONNECTIONS);
        assert_eq!(connection_cap(5000, Some(1024)), 728);
        assert_eq!(connection_cap(100, Some(1024)), 100);
        assert_eq!(connection_cap(0, None), DEFAULT_MAX_CONNECTIONS);
        assert_eq!(per_address_cap(0, 728), 91);
        assert_eq!(per_address_cap(0, 4), 4);
        assert_eq!(per_address_cap(10, 728), 10);
    }

    #[tokio::test]
    async fn a_connection_idle_for_less_than_the_grace_period_stays() {
        let table = Connections::new(Caps {
            fresh_grace: Duration::from_millis(200),
            ..NO_GRACE
        });
        let first = table.admit(ip(1), None).unwrap();
        // Just accepted: not closed for a newcomer, who waits instead.
        assert!(table.admit(ip(2), None).is_none());
        let waited = table
            .admit_within(ip(2), None, Duration::from_secs(30))
            .await;
        // Past its grace period, it made room.
        let second = waited.unwrap();
        assert!(first.shared().evicted.load(Ordering::Acquire));
        drop(first);
        // Busy: never closed. A newcomer waiting gets the place when it ends.
        second.started();
        let third = tokio::spawn({
            let table = table.clone();
            async move {
                table
                    .admit_within(ip(3), None, Duration::from_secs(30))
                    .await
                    .is_some()
            }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(!third.is_finished());
        drop(second);
        assert!(third.await.unwrap());
    }

    #[cfg(unix)]
    #[test]
    fn a_connection_whose_request_is_not_read_yet_is_not_closed() {
        use std::io::{Read, Write};
        use std::os::fd::AsRawFd;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server_end, _) = listener.accept().unwrap();
        let table = Connections::new(NO_GRACE);
        let first = table.admit(ip(1), Some(server_end.as_raw_fd())).unwrap();
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
        // The request waits in the socket: the server owes the client, not the reverse.
        for _ in 0..100 {
            if unread(Some(server_end.as_raw_fd())) {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(table.admit(ip(2), None).is_none());
        let mut buf = [0u8; 64];
        let _ = server_end.read(&mut buf).unwrap();
        // Read, and still idle (a half request, say): fair game.
        assert!(table.admit(ip(2), None).is_some());
        assert!(first.shared().evicted.load(Ordering::Acquire));
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::7".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        assert_ne!(client_key(a), client_key(c));
        let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(client_key(mapped), ip(1));
    }
}
