"""examples/loss_vs_delay_sweep.py runs (short settings), stores its runs and draws its plot."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_loss_vs_delay_example_runs(tmp_path):
    store = tmp_path / "store"
    cmd = [sys.executable, str(ROOT / "examples" / "loss_vs_delay_sweep.py"), "--delays", "10ms,160ms",
           "--seeds", "1-2", "--duration", "60", "--jobs", "2", "--store", str(store)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert (store / "loss_vs_delay.png").stat().st_size > 1000
    assert len(list((store / "runs").glob("*.parquet"))) == 4
    lines = [line.split() for line in out.stdout.splitlines() if line.strip().startswith(("10ms", "160ms"))]
    assert [(row[0], row[1]) for row in lines] == [("10ms", "2"), ("160ms", "2")]
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "4 already stored (skipped), 0 to run" in again.stderr
