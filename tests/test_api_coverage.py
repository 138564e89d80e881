"""docs/api-coverage.md is generated from the code, so it cannot go stale."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_api_coverage_table_is_current():
    r = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_api_coverage.py"), "--check"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr + "\nrun: python docs/gen_api_coverage.py --write"
