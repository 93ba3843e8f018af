"""Count the failing FMI 3.0 call sequences of test_fmi3_sequences.py over a folder of FMI 3.0 FMUs,
by kind (crash, hang, fmi3Fatal, a call the standard forbids accepted, a "must" broken, other):

    python tests/fmi/fmi3_sequence_survey.py <folder of FMI 3.0 FMUs> [sequences per FMU] [seed]

The sequences are drawn from the test's strategies with a fixed seed, so two builds (before and
after a change) are measured on the same sequences."""

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_fmi3_sequences import Worker, check_plan, plans, prepared  # noqa: E402

from contactfmu.components import NAMES  # noqa: E402


def kind(text):
    for word, label in (
        ("crash", "crash"),
        ("hang", "hang"),
        ("fmi3Fatal", "fmi3Fatal"),
        ("took", "doStep over its CPU bound"),
        ("must be fmi3Error", "call accepted that the standard forbids"),
        ("must succeed", "a 'must' broken"),
        ("does not name", "message missing"),
        ("non-finite", "non-finite output"),
    ):
        if word in text:
            return label
    return "other"


def survey(folder, count, run_seed):
    totals = {}
    for name in NAMES:
        worker = Worker.of(str(Path(folder) / f"{name}.fmu"))
        found = []

        @seed(run_seed)
        @settings(
            max_examples=count,
            database=None,
            derandomize=False,
            phases=["generate"],
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(data=st.data())
        def one(data):
            plan = prepared(data.draw(plans(worker.md)))
            records, ended = worker.run(plan)
            try:
                assert ended is None, ended
                check_plan(worker.md, plan, records)
                found.append(None)
            except AssertionError as exc:
                found.append(kind(str(exc)))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            one()
        failed = [k for k in found if k]
        print(f"{name}: {len(found)} sequences, {len(failed)} failing", flush=True)
        for k in failed:
            totals[k] = totals.get(k, 0) + 1
        totals["sequences"] = totals.get("sequences", 0) + len(found)
    print(totals)


if __name__ == "__main__":
    survey(
        sys.argv[1],
        int(sys.argv[2]) if len(sys.argv) > 2 else 100,
        int(sys.argv[3]) if len(sys.argv) > 3 else 0,
    )
