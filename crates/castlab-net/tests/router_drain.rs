//! The user-space router's way out (`Router::shutdown`) across namespaces the test creates:
//!
//! * a router namespace (kernel forwarding off) between two hosts, 300 ms of delay line toward
//!   the second: a burst crossing the router is stopped in the delay line; the drain sends every
//!   frame of it at its time when the limit allows, and exactly the ones it counts as forwarded
//!   when the limit is shorter (the rest counted as left);
//! * two routers in a chain, a member behind the second: the membership the second relayed to
//!   the first is withdrawn when the second shuts down, so the first prunes at once instead of
//!   holding it for its membership interval.
//!
//! Namespaces carry the pid in their names and are removed on success, failure, panic and
//! SIGINT/SIGTERM; without root or `ip` the tests are skipped with the reason printed.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration as StdDuration;

use castlab_core::Duration;
use castlab_net::router::config::{IfaceConfig, Route, RouteVia};
use castlab_net::router::sys;
use castlab_net::{DrainReport, Router, RouterConfig};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("`ip` not available: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Hosts h1, h2 on links 10.205.k.0/24 (router .1, host .2) to the router namespace r.
struct Topo {
    pid: u32,
    nses: Vec<String>,
}

/// One test at a time: each makes its namespaces under the same pid.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Topo {
    fn ns(&self, who: &str) -> String {
        format!("clrd-{}-{who}", self.pid)
    }
    /// A namespace of this topology (deleted with it).
    fn add_ns(&mut self, who: &str) -> Result<String, String> {
        let n = self.ns(who);
        ip(&["netns", "add", &n])?;
        self.nses.push(n.clone());
        let _ = ip(&["netns", "exec", &n, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        ip(&["-n", &n, "link", "set", "lo", "up"])?;
        Ok(n)
    }
    /// A veth between `a` (named `an`) and `b` (named `bn`), both up.
    fn veth(&self, a: &str, an: &str, b: &str, bn: &str) -> Result<(), String> {
        let (na, nb) = (self.ns(a), self.ns(b));
        ip(&["link", "add", an, "netns", &na, "type", "veth", "peer", "name", bn, "netns", &nb])?;
        ip(&["-n", &na, "link", "set", an, "up"])?;
        ip(&["-n", &nb, "link", "set", bn, "up"])
    }
    fn rif(&self, k: usize) -> String {
        format!("rd{}r{k}", self.pid % 100_000)
    }
    fn host(k: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 205, k as u8, 2)
    }
    fn gw(k: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 205, k as u8, 1)
    }

    fn create() -> Result<Topo, String> {
        if unsafe { libc::geteuid() } != 0 {
            return Err("needs root to create network namespaces".into());
        }
        let mut t = Topo { pid: std::process::id(), nses: Vec::new() };
        unsafe {
            libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        }
        let r = t.ns("r");
        ip(&["netns", "add", &r])?;
        t.nses.push(r.clone());
        ip(&["netns", "exec", &r, "sysctl", "-qw", "net.ipv4.ip_forward=0"])?;
        ip(&["-n", &r, "link", "set", "lo", "up"])?;
        let _ = ip(&["netns", "exec", &r, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        for k in 1..=2 {
            let h = t.ns(&format!("h{k}"));
            ip(&["netns", "add", &h])?;
            t.nses.push(h.clone());
            let (ri, hi) = (t.rif(k), format!("rd{}h{k}", t.pid % 100_000));
            ip(&["link", "add", &ri, "netns", &r, "type", "veth", "peer", "name", &hi, "netns", &h])?;
            ip(&["-n", &r, "link", "set", &ri, "up"])?;
            ip(&["-n", &h, "addr", "add", &format!("{}/24", Self::host(k)), "dev", &hi])?;
            ip(&["-n", &h, "link", "set", &hi, "up"])?;
            ip(&["-n", &h, "route", "add", "default", "via", &Self::gw(k).to_string()])?;
            let _ = ip(&["netns", "exec", &h, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
            let hi2 = hi.clone();
            in_ns(&h, move || sys::offloads_off(&hi2)).join().unwrap().map_err(|e| format!("offloads: {e}"))?;
        }
        Ok(t)
    }

    fn router_config(&self) -> RouterConfig {
        let mut c = RouterConfig::default();
        for k in 1..=2 {
            c.ifaces.push(IfaceConfig::new(&self.rif(k), Self::gw(k), 24));
        }
        c.ifaces[1].delay = Duration::from_millis(300);
        c
    }
}

impl Drop for Topo {
    fn drop(&mut self) {
        for n in self.nses.iter().rev() {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
        if INTERRUPTED.load(Ordering::SeqCst) {
            eprintln!("interrupted: namespaces deleted");
            std::process::exit(130);
        }
    }
}

fn in_ns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> thread::JoinHandle<T> {
    let path = format!("/var/run/netns/{ns}");
    thread::spawn(move || {
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(r, 0, "setns {path}: {}", std::io::Error::last_os_error());
        f()
    })
}

const PORT: u16 = 40_205;
const BURST: u8 = 100;

/// One router run: warm up ARP (datagrams h1 -> h2 until one comes through), send a burst of
/// `BURST` numbered datagrams one per millisecond, stop the router's loop right after the last
/// and drain with `within`. Returns the drain's report and the burst's datagrams h2 received.
fn burst_then_drain(t: &Topo, within: Duration) -> (DrainReport, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let cfg = t.router_config();
    let s2 = stop.clone();
    let router = in_ns(&t.ns("r"), move || {
        let mut r = Router::new(cfg).expect("router starts");
        ready_tx.send(()).unwrap();
        while !s2.load(Ordering::SeqCst) {
            let until = r.now() + Duration::from_millis(2);
            r.run_until(until).expect("router runs");
        }
        r.shutdown(within)
    });
    ready_rx.recv().unwrap();
    let rx = in_ns(&t.ns("h2"), || {
        let s = UdpSocket::bind(SocketAddrV4::new(Topo::host(2), PORT)).unwrap();
        s.set_read_timeout(Some(StdDuration::from_millis(100))).unwrap();
        s
    })
    .join()
    .unwrap();
    let tx = in_ns(&t.ns("h1"), || UdpSocket::bind(SocketAddrV4::new(Topo::host(1), 0)).unwrap()).join().unwrap();
    let to = SocketAddrV4::new(Topo::host(2), PORT);
    let mut buf = [0u8; 256];
    let mut warm = false;
    for _ in 0..40 {
        tx.send_to(b"warm", to).unwrap();
        if rx.recv(&mut buf).is_ok_and(|n| &buf[..n] == b"warm") {
            warm = true;
            break;
        }
    }
    assert!(warm, "h1 never reached h2 through the router");
    // let the warm-up's stragglers through the 300 ms delay line, then read them away
    thread::sleep(StdDuration::from_millis(400));
    while rx.recv(&mut buf).is_ok() {}
    for i in 0..BURST {
        tx.send_to(&[i; 200], to).unwrap();
        thread::sleep(StdDuration::from_millis(1));
    }
    // the burst left h1 within about 100 ms: all of it is in (or entering) the delay line
    thread::sleep(StdDuration::from_millis(5));
    stop.store(true, Ordering::SeqCst);
    let report = router.join().expect("router thread");
    // after the router has gone: what reached h2 is what the drain forwarded
    rx.set_read_timeout(Some(StdDuration::from_millis(300))).unwrap();
    let mut seen = [false; BURST as usize];
    while let Ok(n) = rx.recv(&mut buf) {
        if n == 200 && buf[0] < BURST {
            seen[buf[0] as usize] = true;
        }
    }
    (report, seen.iter().filter(|x| **x).count())
}

#[test]
fn the_router_drains_its_delay_line_within_the_limit_and_counts_what_it_left() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let t = match Topo::create() {
        Ok(t) => t,
        Err(why) => {
            eprintln!("SKIPPED the_router_drains_its_delay_line_within_the_limit_and_counts_what_it_left: {why}");
            return;
        }
    };
    // a limit longer than the delay line: the whole burst goes out, on time
    let (r, got) = burst_then_drain(&t, Duration::from_secs(1));
    eprintln!("drain within 1 s: {r:?}; h2 received {got} of {BURST}");
    assert!(r.queued >= 90, "the burst was in the delay line: {r:?}");
    assert_eq!((r.forwarded, r.left, r.timed_out), (r.queued, 0, false), "{r:?}");
    assert_eq!(got as u64, r.forwarded, "h2 received what the drain forwarded");
    // the last frame entered the delay line about when the loop stopped: up to 300 ms more
    assert!(r.took_ns >= 150_000_000 && r.took_ns < 600_000_000, "{r:?}");

    // a limit that ends inside the burst's delay line (the burst's first frames are due about
    // 190 ms after the stop, its last about 300 ms after): the early part goes, the rest is
    // counted as left, and the drain ends with the limit
    let (r, got) = burst_then_drain(&t, Duration::from_millis(250));
    eprintln!("drain within 250 ms: {r:?}; h2 received {got} of {BURST}");
    assert!(r.queued >= 90 && r.timed_out, "{r:?}");
    assert!(r.forwarded > 0 && r.left > 0 && r.forwarded + r.left == r.queued, "{r:?}");
    assert_eq!(got as u64, r.forwarded, "h2 received what the drain forwarded, no more");
    assert!(r.took_ns < 300_000_000, "the limit bounds the drain: {r:?}");
}

/// ra and rb in a chain (10.206.0.0/30), h1 behind ra, h2 behind rb; the routers' configs.
fn chain() -> Result<(Topo, RouterConfig, RouterConfig), String> {
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root to create network namespaces".into());
    }
    let mut t = Topo { pid: std::process::id(), nses: Vec::new() };
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    for r in ["ra", "rb"] {
        let n = t.add_ns(r)?;
        ip(&["netns", "exec", &n, "sysctl", "-qw", "net.ipv4.ip_forward=0"])?;
    }
    for h in ["h1", "h2"] {
        t.add_ns(h)?;
    }
    let p = t.pid % 100_000;
    let dev = |x: &str| format!("rc{p}{x}");
    t.veth("ra", &dev("a0"), "rb", &dev("b0"))?;
    t.veth("ra", &dev("a1"), "h1", &dev("h1"))?;
    t.veth("rb", &dev("b2"), "h2", &dev("h2"))?;
    for k in [1u8, 2] {
        let (h, d) = (t.ns(&format!("h{k}")), dev(&format!("h{k}")));
        ip(&["-n", &h, "addr", "add", &format!("10.206.{k}.2/24"), "dev", &d])?;
        ip(&["-n", &h, "route", "add", "default", "via", &format!("10.206.{k}.1")])?;
        in_ns(&h, move || sys::offloads_off(&d)).join().unwrap().map_err(|e| format!("offloads: {e}"))?;
    }
    let a = |d: &str, k: u8| IfaceConfig::new(&dev(d), Ipv4Addr::new(10, 206, k, 1), 24);
    let ca = RouterConfig {
        ifaces: vec![IfaceConfig::new(&dev("a0"), Ipv4Addr::new(10, 206, 0, 1), 30), a("a1", 1)],
        routes: vec![Route {
            dst: Ipv4Addr::new(10, 206, 2, 0),
            prefix_len: 24,
            via: RouteVia::Gateway(Ipv4Addr::new(10, 206, 0, 2)),
        }],
        ..RouterConfig::default()
    };
    let cb = RouterConfig {
        ifaces: vec![IfaceConfig::new(&dev("b0"), Ipv4Addr::new(10, 206, 0, 2), 30), a("b2", 2)],
        routes: vec![Route {
            dst: Ipv4Addr::UNSPECIFIED,
            prefix_len: 0,
            via: RouteVia::Gateway(Ipv4Addr::new(10, 206, 0, 1)),
        }],
        ..RouterConfig::default()
    };
    Ok((t, ca, cb))
}

/// A router in namespace `ns` until `stop`, publishing the number of groups with members on
/// its interface 0 after every slice; then its shutdown's report.
fn router_in(
    ns: &str,
    cfg: RouterConfig,
    stop: Arc<AtomicBool>,
    members0: Arc<std::sync::atomic::AtomicUsize>,
) -> thread::JoinHandle<DrainReport> {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let h = in_ns(ns, move || {
        let mut r = Router::new(cfg).expect("router starts");
        ready_tx.send(()).unwrap();
        while !stop.load(Ordering::SeqCst) {
            let until = r.now() + Duration::from_millis(2);
            r.run_until(until).expect("router runs");
            members0.store(r.members(0).len(), Ordering::SeqCst);
        }
        r.shutdown(Duration::from_secs(1))
    });
    ready_rx.recv().unwrap();
    h
}

#[test]
fn a_router_shutting_down_withdraws_the_membership_it_relayed_upstream() {
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (t, ca, cb) = match chain() {
        Ok(x) => x,
        Err(why) => {
            eprintln!("SKIPPED a_router_shutting_down_withdraws_the_membership_it_relayed_upstream: {why}");
            return;
        }
    };
    let (stop_a, stop_b) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (ma, mb) = (Arc::new(std::sync::atomic::AtomicUsize::new(0)), Arc::new(std::sync::atomic::AtomicUsize::new(0)));
    let ra = router_in(&t.ns("ra"), ca, stop_a.clone(), ma.clone());
    let rb = router_in(&t.ns("rb"), cb, stop_b.clone(), mb);
    // h2 joins a group from any source: rb relays it to ra (a TO_EX{} on the link between them)
    let group = Ipv4Addr::new(239, 206, 0, 1);
    let member = in_ns(&t.ns("h2"), move || {
        let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 40_206)).unwrap();
        s.join_multicast_v4(&group, &Ipv4Addr::new(10, 206, 2, 2)).unwrap();
        s
    })
    .join()
    .unwrap();
    let t0 = std::time::Instant::now();
    while ma.load(Ordering::SeqCst) == 0 {
        assert!(t0.elapsed() < StdDuration::from_secs(5), "ra never heard rb's relayed membership");
        thread::sleep(StdDuration::from_millis(5));
    }
    // rb goes while h2 is still a member: its shutdown withdraws the relayed membership
    stop_b.store(true, Ordering::SeqCst);
    let t_stop = std::time::Instant::now();
    let report = rb.join().expect("rb's thread");
    while ma.load(Ordering::SeqCst) != 0 && t_stop.elapsed() < StdDuration::from_secs(3) {
        thread::sleep(StdDuration::from_millis(1));
    }
    let pruned = t_stop.elapsed().as_secs_f64();
    stop_a.store(true, Ordering::SeqCst);
    ra.join().expect("ra's thread");
    drop(member);
    eprintln!("rb's way out: {report:?}; ra pruned the group {:.1} ms after rb was told to stop", pruned * 1e3);
    assert_eq!(report.withdrawn, 1, "{report:?}");
    // ra holds a membership for its membership interval (260 s) unless it is withdrawn
    assert!(pruned < 0.5, "ra still held rb's membership {pruned} s after rb stopped");
}
