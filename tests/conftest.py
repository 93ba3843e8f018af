import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

# property-based tests (tests/fmi/test_properties.py): "ci", the default, runs a fixed seed and a few
# examples per FMU in the test suite; "nightly" many random examples:
#     python -m pytest tests/fmi/test_properties.py --hypothesis-profile=nightly
# Without hypothesis's "explain" phase: it reruns a failing example under line tracing, which
# slows the FMUs' Python several times over and turns a CPU-time bound's margin into a failure.
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
settings.register_profile(
    "ci",
    max_examples=12,
    derandomize=True,
    phases=PHASES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "nightly",
    max_examples=1500,
    phases=PHASES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("CONTACTFMU_HYPOTHESIS_PROFILE", "ci"))

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


@pytest.fixture(scope="session")
def fmu3_dir(tmp_path_factory):
    """Every FMU as an FMI 3.0 co-simulation FMU, freshly built (and validated)."""
    from contactfmu.build import build_all

    out = tmp_path_factory.mktemp("fmus3")
    results = build_all(out, progress=None, standard="3.0")
    bad = {n: p for n, (_, p) in results.items() if p}
    assert not bad, bad
    return out


_exit_status = []


def pytest_sessionfinish(session, exitstatus):
    _exit_status.append(int(exitstatus))


def pytest_unconfigure(config):
    """End the test process without interpreter finalization, after pytest has reported
    everything: a process that ran pythonfmu FMUs was seen to abort intermittently while Python
    shut down ("corrupted double-linked list", docs/known-issues.md, "Abort at interpreter exit
    (pythonfmu 0.7.0)"). The exit status is pytest's."""
    if _exit_status:
        from contactfmu.examples import exit_now

        exit_now(_exit_status[-1])
