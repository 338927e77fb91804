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
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../castlab-proto/src");
    let mut stack = vec![src];
    let mut offenders = Vec::new();
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("proto sources") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).expect("read");
                let code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
                if code.into_iter().any(|l| l.contains("std::time") || l.contains("SystemTime")) {
                    offenders.push(p.display().to_string());
                }
            }
        }
    }
    assert!(offenders.is_empty(), "castlab-proto must not read a clock: {offenders:?}");
}
