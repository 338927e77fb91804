//! The one dependency rule of DESIGN.md, checked on the resolved dependency graph
//! (`cargo tree -e normal`, transitive): the protocols depend on castlab-core only (no engine,
//! no async runtime, no Python); the engine and the real-network driver know no protocol.

use std::process::Command;

/// The crates `package` depends on at run time (normal edges, transitively), by name.
fn normal_deps(package: &str) -> Option<Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "-e", "normal", "--prefix", "none", "--format", "{p}", "-p", package])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        // A crate not (yet) in the workspace has nothing to check.
        assert!(err.contains("did not match any packages"), "cargo tree -p {package} failed: {err}");
        return None;
    }
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut names: Vec<String> = text.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_owned).collect();
    names.sort();
    names.dedup();
    Some(names)
}

fn assert_none_of(package: &str, forbidden: &[&str]) {
    let deps = normal_deps(package).unwrap_or_default();
    let bad: Vec<&String> = deps.iter().filter(|d| forbidden.contains(&d.as_str())).collect();
    assert!(bad.is_empty(), "{package} must not depend on {bad:?} (DESIGN.md, the dependency rule)");
}

const RUNTIMES: &[&str] = &["pyo3", "numpy", "tokio", "async-std", "mio", "socket2"];

#[test]
fn proto_depends_on_core_only() {
    let deps = normal_deps("castlab-proto").expect("castlab-proto is in the workspace");
    assert!(deps.iter().any(|d| d == "castlab-core"));
    let mut forbidden = vec!["castlab-sim", "castlab-net", "castlab-py"];
    forbidden.extend(RUNTIMES);
    assert_none_of("castlab-proto", &forbidden);
}

#[test]
fn engine_knows_no_protocol() {
    let deps = normal_deps("castlab-sim").expect("castlab-sim is in the workspace");
    assert!(deps.iter().any(|d| d == "castlab-core"));
    let mut forbidden = vec!["castlab-proto", "castlab-net", "castlab-py"];
    forbidden.extend(RUNTIMES);
    assert_none_of("castlab-sim", &forbidden);
}

#[test]
fn real_network_driver_knows_no_protocol() {
    assert_none_of("castlab-net", &["castlab-proto", "castlab-sim", "castlab-py", "pyo3", "numpy"]);
}

#[test]
fn proto_reads_no_clock() {
    // Agents get `now` from their driver; a wall clock inside a protocol breaks determinism.
    // The rule is clippy's (`crates/castlab-proto/clippy.toml`: disallowed methods and types),
    // run here with those lints denied; a separate target directory keeps it off the lock of
    // the `cargo test` that runs this.
    let proto = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../castlab-proto");
    let rules = std::fs::read_to_string(proto.join("clippy.toml")).expect("castlab-proto/clippy.toml");
    for path in ["std::time::Instant::now", "std::time::SystemTime::now", "std::time::Instant", "std::time::SystemTime"]
    {
        assert!(rules.contains(&format!("\"{path}\"")), "clippy.toml must disallow {path}");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("clippy-clock");
    let out = Command::new(cargo)
        .args(["clippy", "--offline", "--quiet", "-p", "castlab-proto", "--lib", "--target-dir"])
        .arg(&target)
        .args(["--", "-A", "clippy::all", "-D", "clippy::disallowed_methods", "-D", "clippy::disallowed_types"])
        .current_dir(&proto)
        .output()
        .expect("cargo runs");
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("no such command") {
        eprintln!("skipped: cargo clippy is not installed (rustup component add clippy)");
        return;
    }
    assert!(out.status.success(), "castlab-proto must not read a clock (clippy.toml):\n{err}");
}
