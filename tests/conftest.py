import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


@pytest.fixture(scope="session")
def fmu_dir(tmp_path_factory):
    """Every FMU, freshly built (and validated) into a temporary directory."""
    from contactfmu.build import build_all

    out = tmp_path_factory.mktemp("fmus")
    results = build_all(out, progress=None)
    bad = {n: p for n, (_, p) in results.items() if p}
    assert not bad, bad
    return out
