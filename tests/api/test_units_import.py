"""Quantities with units and a fast `import castlab`."""

import subprocess
import sys
import warnings

import pytest

from castlab.units import UnitError, UnitWarning, parse_rate, parse_time


@pytest.mark.parametrize("text,bps", [
    ("1.5Mbps", 1.5e6), ("64kbps", 64e3), ("64 kb/s", 64e3), ("10Gbps", 10e9),
    ("1MBps", 8e6), ("2e6", 2e6), (128000, 128e3), (2.5e6, 2.5e6), ("500bps", None),
])
def test_rates(text, bps):
    if bps is None:
        with pytest.raises(UnitError, match="under 1 kb/s"):
            parse_rate(text, key="links.rate")
    else:
        assert parse_rate(text) == pytest.approx(bps, rel=1e-12)


@pytest.mark.parametrize("text,s", [
    ("10ms", 0.01), ("250us", 250e-6), ("3ns", 3e-9), ("2.5 s", 2.5), ("1min", 60.0), (0, 0.0), ("0.02", 0.02),
])
def test_times(text, s):
    assert parse_time(text) == pytest.approx(s, rel=1e-12)


@pytest.mark.parametrize("fn,value,match", [
    (parse_rate, "1.5 Mbit", "unknown rate unit 'Mbit'"),
    (parse_rate, "fast", "cannot read 'fast'"),
    (parse_rate, "-1Mbps", "positive"),
    (parse_rate, 0, "positive"),
    (parse_rate, float("inf"), "finite"),
    (parse_rate, True, "expected a number"),
    (parse_rate, [1], "expected a number"),
    (parse_time, "10 parsecs", "unknown time unit 'parsecs'"),
    (parse_time, "-5ms", "non-negative"),
    (parse_time, "200", "over 100 s"),
])
def test_errors_name_key_and_line(fn, value, match):
    with pytest.raises(UnitError, match=match) as e:
        fn(value, key="links.a-b.x", line=12)
    assert "'links.a-b.x' (line 12)" in str(e.value)


def test_implausible_is_a_warning_when_not_strict():
    with pytest.warns(UnitWarning, match="'rate':.*under 1 kb/s"):
        assert parse_rate(100, key="rate", strict=False) == 100.0
    with pytest.warns(UnitWarning, match="over 100 s"):
        assert parse_time("2min", key="delay", strict=False) == 120.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert parse_time("2min", key="duration", max_s=None) == 120.0
    with pytest.raises(UnitError, match="positive"):
        parse_time(0, key="duration", allow_zero=False)


def test_import_castlab_does_not_import_pandas():
    code = "import sys, castlab; assert 'pandas' not in sys.modules, 'pandas imported'; print('ok')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # the frame helpers still work, loaded on first use
    code = "import castlab, sys; f = castlab.series_frame; assert 'pandas' in sys.modules; print(f.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "series_frame"


def test_version_flag():
    import castlab

    out = subprocess.run([sys.executable, "-m", "castlab", "--version"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"castlab {castlab.__version__}"
