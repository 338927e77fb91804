//! The network-namespace harness of the root tests: a namespace the test creates and deletes
//! (on success, failure, panic and SIGINT/SIGTERM), and the re-run of one test of the binary
//! inside it. Cargo has no "skipped" state: without root or `ip netns` a test passes and says
//! why.

#![allow(dead_code)] // each test binary uses its own part

use std::net::Ipv4Addr;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set in the re-run inside the namespace: the test does its work there.
pub const INNER: &str = "CASTLAB_NET_IN_NETNS";

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// A namespace created for this test and deleted when dropped (success, failure or panic);
/// SIGINT/SIGTERM while it exists are noted and re-raised as exit 130 after the deletion.
pub struct Netns {
    pub name: String,
}

impl Netns {
    pub fn create(tag: &str) -> Result<Netns, String> {
        if unsafe { libc::geteuid() } != 0 {
            return Err("needs root to create a network namespace".into());
        }
        sweep_stale();
        let name = format!("castlab-t-{}-{tag}", std::process::id());
        let ip = |args: &[&str]| -> Result<(), String> {
            let out = Command::new("ip").args(args).output().map_err(|e| format!("`ip` not available: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
            }
        };
        ip(&["netns", "add", &name])?;
        let ns = Netns { name };
        unsafe {
            libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        }
        ip(&["-n", &ns.name, "link", "set", "lo", "up", "multicast", "on"])?;
        ip(&["-n", &ns.name, "route", "add", "239.0.0.0/8", "dev", "lo"])?;
        Ok(ns)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.name]).status();
        if INTERRUPTED.load(Ordering::SeqCst) {
            eprintln!("interrupted: namespace {} deleted", self.name);
            std::process::exit(130);
        }
    }
}

/// Delete namespaces left by earlier runs that were killed outright (their pid is gone).
pub fn sweep_stale() {
    let Ok(out) = Command::new("ip").args(["netns", "list"]).output() else { return };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        if let Some(rest) = name.strip_prefix("castlab-t-") {
            let pid = rest.split('-').next().unwrap_or("");
            if !pid.is_empty()
                && pid.chars().all(|c| c.is_ascii_digit())
                && !std::path::Path::new(&format!("/proc/{pid}")).exists()
            {
                let _ = Command::new("ip").args(["netns", "del", name]).status();
            }
        }
    }
}

/// Run test `name` of this binary inside a fresh namespace; skip (with the reason) where
/// namespaces cannot be made.
pub fn in_netns(name: &str, tag: &str) {
    let ns = match Netns::create(tag) {
        Ok(ns) => ns,
        Err(why) => {
            eprintln!("SKIPPED {name}: {why}");
            return;
        }
    };
    let exe = std::env::current_exe().unwrap();
    let status = Command::new("ip")
        .args(["netns", "exec", &ns.name])
        .arg(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(INNER, "1")
        .status()
        .expect("running the test inside the namespace");
    assert!(status.success(), "the in-namespace run failed: {status}");
}

pub fn lo(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 0, n)
}
