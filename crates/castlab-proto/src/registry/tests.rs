//! The registry's own tests: the table is consistent, and the router kinds build by name.

use super::*;

#[test]
fn names_are_unique_across_the_table() {
    let mut seen = std::collections::BTreeSet::new();
    for p in crate::PROTOCOLS {
        assert!(seen.insert(("protocol", p.name)), "{}", p.name);
        for c in p.configs {
            assert!(seen.insert(("config", c.name)), "{}", c.name);
        }
        for r in p.roles {
            assert!(seen.insert(("method", r.name)), "{}", r.name);
        }
        for r in p.readers {
            assert!(seen.insert(("method", r.name)), "{}", r.name);
        }
        for f in p.functions {
            assert!(seen.insert(("function", f.name)), "{}", f.name);
            if let Some(c) = f.config {
                assert!(config_table(c).is_some(), "{}: {}", f.name, c);
            }
        }
    }
}

#[test]
fn every_role_names_a_config_table_that_exists_and_params_start_with_the_node() {
    for p in crate::PROTOCOLS {
        for r in p.roles {
            if let Some(c) = r.config {
                assert!(config_table(c).is_some(), "{}: {}", r.name, c);
            }
            assert!(!r.params.is_empty(), "{}", r.name);
        }
        for s in p.sessions {
            assert!(role(s.role).is_some(), "{}", s.kind);
        }
        for s in p.receivers {
            assert!(role(s.role).is_some(), "{}", s.protocol);
            assert!(reader(s.row).is_some(), "{}", s.row);
        }
        for s in p.routers {
            assert!(role(s.role).is_some(), "{}", s.kind);
        }
        for f in p.flows {
            assert!(role(f.role).is_some(), "{}", f.table);
            assert!(f.sink.is_none_or(|s| role(s).is_some()), "{}", f.table);
        }
    }
}

/// A flow table's entries run from `src` to `dst` (the flow table's `node` column is
/// `src->dst`), and its name is not one of the scenario's other tables.
#[test]
fn every_flow_table_has_src_and_dst_and_a_free_name() {
    let taken = ["links", "sessions", "receivers", "routers", "monitors", "events", "captures"];
    for p in crate::PROTOCOLS {
        for f in p.flows {
            assert!(!taken.contains(&f.table), "{}", f.table);
            for end in ["src", "dst"] {
                let k = f.keys.iter().find(|k| k.name == end);
                assert!(k.is_some_and(|k| k.kind == KeyKind::Node && k.default == Default_::Required), "{}", f.table);
            }
        }
    }
}

/// The first session kind is the default of a session that names none: the engine's layered
/// CBR session, whose receivers default to RLM's.
#[test]
fn the_default_session_kind_is_layered() {
    let first = crate::PROTOCOLS.iter().flat_map(|p| p.sessions.iter()).next().map(|s| s.kind);
    assert_eq!(first, Some("layered"));
}

/// The scenario's flow table calls every receiver's row reader alike: `agent`, then
/// `packet_size` and `windows` by keyword, and `source` (the session's source agent) to a row
/// that takes it; any other parameter must have a default.
#[test]
fn every_flow_row_reader_takes_the_flow_tables_arguments() {
    for p in crate::PROTOCOLS {
        let rows = p.receivers.iter().map(|k| (k.protocol, k.row)).chain(p.flows.iter().map(|f| (f.table, f.row)));
        for (kind, row) in rows {
            let r = reader(row).unwrap_or_else(|| panic!("{kind}: no reader {row}"));
            assert_eq!(r.target, Target::Agent("agent"), "{}", r.name);
            let names: Vec<&str> = r.params.iter().map(|p| p.name).collect();
            assert!(names.contains(&"packet_size") && names.contains(&"windows"), "{}: {names:?}", r.name);
            let mut other = r.params.iter().filter(|p| !["packet_size", "windows", "source"].contains(&p.name));
            assert!(other.all(|p| p.default != Default_::Required), "{}", r.name);
            assert_eq!(r.hosts, Hosts::Sim, "{}", r.name);
        }
    }
}

/// A host with one node (id 7), nothing else, that keeps what is attached.
struct OneNode(Vec<(NodeId, Box<dyn RouterExtension + Send>)>);

impl Host for OneNode {
    fn node(&self, field: &'static str, v: &Value) -> BuildResult<NodeId> {
        match v {
            Value::Int(7) => Ok(NodeId(7)),
            v => Err(BuildError::bad(field, Raw(v), "no such node")),
        }
    }
    fn node_label(&self, n: NodeId) -> String {
        format!("n{}", n.0)
    }
    fn node_count(&self) -> usize {
        0
    }
    fn group(&self, field: &'static str, v: &Value) -> BuildResult<GroupId> {
        Err(BuildError::bad(field, Raw(v), "no groups"))
    }
    fn group_source(&self, _: GroupId) -> Option<NodeId> {
        None
    }
    fn channel(&self, field: &'static str, v: &Value) -> BuildResult<ChannelId> {
        Err(BuildError::bad(field, Raw(v), "no channels"))
    }
    fn channel_from(&self, _: ChannelId) -> Option<NodeId> {
        None
    }
    fn agent(&self, field: &'static str, v: &Value) -> BuildResult<(AgentId, &dyn Any)> {
        Err(BuildError::bad(field, Raw(v), "no agents"))
    }
    fn agent_addr(&self, _: AgentId) -> Option<Addr> {
        None
    }
    fn agent_count(&self) -> usize {
        0
    }
    fn extension(&self, node: NodeId) -> Option<&dyn Any> {
        self.0.iter().find(|(n, _)| *n == node).map(|(_, e)| (**e).as_any())
    }
    fn start(&self, _: &'static str, _: f64) -> BuildResult<Instant> {
        Ok(Instant::ZERO)
    }
    fn time(&self, _: &'static str, _: f64) -> BuildResult<Instant> {
        Ok(Instant::ZERO)
    }
    fn now(&self) -> Instant {
        Instant::ZERO
    }
    fn add_agent(&mut self, _: NodeId, _: Option<u16>, _: Instant, _: Box<dyn Agent + Send>) -> BuildResult<AgentId> {
        Err(BuildError::Host("no agents here".into()))
    }
    fn attach(&mut self, node: NodeId, ext: Box<dyn RouterExtension + Send>) -> BuildResult<()> {
        self.0.push((node, ext));
        Ok(())
    }
}

fn opts(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

fn err_of(r: BuildResult<Out<'static>>) -> String {
    r.expect_err("refused").to_string()
}

#[test]
fn every_router_kind_has_a_node_status_reader() {
    for k in router_kinds() {
        let rk = router_kind(k).unwrap();
        let r = reader(rk.status).unwrap_or_else(|| panic!("{k}: no reader {}", rk.status));
        assert_eq!(r.target, Target::Node, "{k}");
        assert!(r.params.iter().all(|p| p.default != Default_::Required), "{k}: status needs arguments");
    }
}

#[test]
fn builds_each_router_kind_by_name_on_the_given_node() {
    for k in router_kinds() {
        let mut h = OneNode(Vec::new());
        build_router_kind(&mut h, k, NodeId(7), &[]).unwrap_or_else(|e| panic!("{k}: {e}"));
        assert_eq!(h.0.len(), 1, "{k}");
        assert_eq!(h.0[0].0, NodeId(7), "{k}");
    }
    let mut h = OneNode(Vec::new());
    build_router_kind(&mut h, "lmr", NodeId(7), &opts(&[("qweight", Value::Float(0.01))])).unwrap();
    assert!((*h.0[0].1).as_any().downcast_ref::<crate::nlm::NlmRouter>().is_some());
    let mut h = OneNode(Vec::new());
    build_router_kind(&mut h, "nak_aggregator", NodeId(7), &opts(&[("hold", Value::Float(0.2))])).unwrap();
    assert!((*h.0[0].1).as_any().downcast_ref::<crate::lesbcc::pgm_transport::NakAggregator>().is_some());
}

#[test]
fn router_kind_errors_name_the_field_and_list_what_is_known() {
    let mut h = OneNode(Vec::new());
    let e = err_of(build_router_kind(&mut h, "lmx", NodeId(7), &[]));
    assert!(e.starts_with("extension:") && e.contains("lmr") && e.contains("nak_aggregator"), "{e}");
    let e = err_of(build_router_kind(&mut h, "lmr", NodeId(7), &opts(&[("qmaxx", Value::Float(1.0))])));
    assert!(e.starts_with("qmaxx:") && e.contains("qmax") && e.contains("qweight"), "{e}");
    let e = err_of(build_router_kind(&mut h, "nak_aggregator", NodeId(7), &opts(&[("qmax", Value::Float(1.0))])));
    assert!(e.starts_with("qmax:") && e.contains("known: hold"), "{e}");
    // the override reaches the LMR's config: checked there (qmin above qmax)
    let e = err_of(build_router_kind(&mut h, "lmr", NodeId(7), &opts(&[("qmin", Value::Float(1e6))])));
    assert!(e.contains("qm"), "{e}");
    let e = err_of(build_router_kind(&mut h, "nak_aggregator", NodeId(7), &opts(&[("hold", Value::Float(0.0))])));
    assert!(e.starts_with("hold:"), "{e}");
    let e = err_of(build_router_kind(&mut h, "lmr", NodeId(8), &[]));
    assert!(e.starts_with("node:"), "{e}");
    assert!(h.0.is_empty(), "a refused build attached something");
}
