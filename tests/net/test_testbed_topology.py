"""The testbed's topology table: the papers' set-ups are defined beside their experiments and
registered by name; the testbed and its command line read them from the table (no root)."""

from __future__ import annotations

import pytest

import castlab.testbed as testbed
from castlab.testbed import Topology, register, topologies
from castlab.testbed.topology import TOPOLOGIES

# The names the README and docs/testbed.md use on the command line.
DOCUMENTED = {"rlm1", "lesbcc5", "nlm8"}


def test_the_documented_topologies_are_registered_and_importable_by_name():
    table = topologies()
    assert DOCUMENTED <= set(table)
    for name in DOCUMENTED:
        assert getattr(testbed, name) is table[name].make
    with pytest.raises(AttributeError):
        testbed.no_such_topology  # noqa: B018


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_each_builds_a_checked_topology_of_its_name_with_the_receivers_it_is_given(name):
    reg = topologies()[name]
    topo = reg.make(**{reg.receivers: 2})
    assert isinstance(topo, Topology) and topo.name == name
    topo.check()
    receivers = [h for h in topo.hosts if h.startswith("rcv")]
    assert len(receivers) == 2, topo.hosts


def test_a_second_builder_under_a_taken_name_is_refused():
    taken = sorted(topologies())[0]
    with pytest.raises(ValueError, match="registered twice"):
        register(taken)(lambda: None)
    assert TOPOLOGIES[taken].make is not None and TOPOLOGIES[taken].make.__name__ == taken


def test_the_command_line_takes_a_registered_name_and_refuses_others(capsys):
    import argparse

    from castlab.testbed import cli

    p = argparse.ArgumentParser()
    cli.add_parsers(p.add_subparsers(dest="cmd"))
    assert p.parse_args(["testbed", "up", "nlm8", "--receivers", "2"]).topology == "nlm8"
    with pytest.raises(SystemExit):
        p.parse_args(["testbed", "up", "nope"])
    err = capsys.readouterr().err
    assert "invalid choice: 'nope'" in err and all(n in err for n in DOCUMENTED)


def test_the_command_line_and_the_testbeds_submodules_do_not_load_the_experiments():
    # `from castlab.testbed import cli` first asks the package's __getattr__: loading the
    # table there imported every experiment into every `castlab` process (the net roles too)
    import subprocess
    import sys

    code = ("import sys, castlab.cli\nfrom castlab.testbed import cli, topology\n"
            "try:\n    castlab.cli.main(['net', 'source', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('experiments loaded:', 'castlab.experiments' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "experiments loaded: False"


def test_testbed_names_differ_for_every_pid_linux_allows_and_fit_six_characters():
    # one letter, then the pid in base 36: pids that agree in their last five decimal digits
    # (123456 and 23456) get different names, and the largest pid Linux allows (2^22) fits
    from castlab.experiments.net_common import testbed_name

    assert testbed_name("p", 123456) == "p2n9c"  # 123456 = 2*36^3 + 23*36^2 + 9*36 + 12
    assert testbed_name("p", 23456) == "pi3k"  # 23456 = 18*36^2 + 3*36 + 20
    assert testbed_name("t", 1) == "t1"
    big = testbed_name("u", 4194304)
    assert big == "u2hwcg" and len(big) == 6  # 2^22 = 2*36^4 + 17*36^3 + 32*36^2 + 12*36 + 16
    names = {testbed_name("r", n) for n in range(1, 200_000)}
    assert len(names) == 199_999 and max(map(len, names)) <= 6
    for kind in ("fr", "", "1"):
        with pytest.raises(ValueError, match="one letter"):
            testbed_name(kind)
    with pytest.raises(ValueError, match="outside"):
        testbed_name("p", 36 ** 5)
