"""A non-Python FMI 3.0 host: tests/host/fmi3_host.c, compiled here with the system C compiler,
loads the FMI 3.0 FMUs with dlopen (binaries/x86_64-linux/<Model>.so of the extracted FMU) and
drives them through the plain FMI 3.0 C API, in an empty environment (`env -i`): the FMU loads
libpython itself (docs/importers.md "Non-Python hosts"), or uses the one the host loaded first.

The host prints every call's status, every message its logger receives and every step's flags and
outputs (%.17g); the tests here parse that. EndStop's rigid case has closed-form impacts
(test_fmi3_events.py): mode 1, kind 3, ci = 0.5, l1 = l2 = 0.25 m, m1 = 1 kg, ctr1.v = 1 m/s:
impacts at 0.25, 1.25 and 3.25 s, dx = 0.21875 m and dv = -0.125 m/s at 3.5 s.

Checked: no early return and no event flag without the permissions (fmpy's results bit for bit);
the early returns at the impacts, eventHandlingNeeded and event mode; the intermediate-update
callback; errors returned as fmi3Error (an invalid parameter, a parameter set after
initialization, the functions the FMU lacks); a NULL logger; fmi3Reset keeping the importer's
permissions; fmi3GetFMUState / fmi3SetFMUState and their serialization at an early return, bit for
bit, and the state functions misused; the FMI 2.0 and FMI 3.0 builds in one process; libpython
found by the FMU, or its reason when none is found; instantiation arguments the FMU cannot use
refused with NULL and a message (no crash, no hang); getters and setters misused (nValues, NULL
arrays, value references of the shim's own) refused with fmi3Error."""

import os
import shutil
import subprocess
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from fmpy import read_model_description, simulate_fmu

from contactfmu import hostenv
from contactfmu.build import python_record
from contactfmu.fmi.shim import CONTROL_VR, DERIVATIVE_VR

HOST_SRC = Path(__file__).resolve().parents[1] / "host" / "fmi3_host.c"
ENV = shutil.which("env") or "/usr/bin/env"
ERROR = 3  # fmi3Error

ENDSTOP = {"mode": 1, "kind": 3, "ci": 0.5, "l1": 0.25, "l2": 0.25, "m1": 1.0, "ctr1.v": 1.0}
IMPACTS = [0.25, 1.25, 3.25]
FINAL = {"dx": 0.21875, "dv": -0.125}  # at 3.5 s


@pytest.fixture(scope="module")
def libpython():
    try:
        return hostenv.libpython()
    except hostenv.HostEnvError as exc:
        pytest.skip(f"no shared libpython for a C host: {exc}")


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    cc = os.environ.get("CC", "gcc")
    if not shutil.which(cc):
        pytest.skip(f"no C compiler ({cc}; set CC) to build the FMI 3.0 C host")
    exe = tmp_path_factory.mktemp("host3") / "fmi3_host"
    cmd = [cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe), str(HOST_SRC)]
    build = subprocess.run([*cmd, "-ldl", "-lm"], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    return exe


@dataclass
class Fmu:
    """An extracted FMU: its folder, model identifier, token (guid) and variables."""

    dir: Path
    model: str
    token: str
    vr: dict
    type: dict

    def spec(self, name):
        return {"Float64": "r", "Real": "r", "Int32": "i", "Integer": "i"}.get(
            self.type[name], "b"
        ) + str(self.vr[name])


def extract(fmu, folder):
    with zipfile.ZipFile(fmu) as z:
        z.extractall(folder)
    md = read_model_description(str(fmu))
    return Fmu(
        folder,
        md.coSimulation.modelIdentifier,
        md.guid,
        {v.name: v.valueReference for v in md.modelVariables},
        {v.name: v.type for v in md.modelVariables},
    )


@pytest.fixture(scope="module")
def endstop3(fmu3_dir, tmp_path_factory):
    return extract(fmu3_dir / "EndStop.fmu", tmp_path_factory.mktemp("EndStop3"))


@pytest.fixture(scope="module")
def mass3(fmu3_dir, tmp_path_factory):
    return extract(fmu3_dir / "Mass.fmu", tmp_path_factory.mktemp("Mass3"))


@dataclass
class Step:
    t: float
    h: float
    status: int
    needed: bool
    terminate: bool
    early: bool
    last: float
    text: str  # the outputs as printed (%.17g)
    y: tuple


@dataclass
class Run:
    """What the host printed, in order: (kind, record) pairs; and its exit status."""

    returncode: int
    records: list = field(default_factory=list)
    stderr: str = ""
    stdout: str = ""  # as printed (a message of several lines continues its "log" line)

    def of(self, kind, phase=None):
        current, found = None, []
        for k, r in self.records:
            if k == "phase":
                current = r
            elif k == kind and (phase is None or current == phase):
                found.append(r)
        return found

    def calls(self, name=None):
        return [s for n, s in self.of("call") if name is None or n == name]

    def steps(self, phase=None):
        return self.of("step", phase)


def parse(stdout):
    records = []
    for line in stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind in ("step", "step2"):
            head, _, values = rest.partition(" : ")
            f = head.split()
            y = tuple(float(v) for v in values.split())
            if kind == "step":
                t, h, st, needed, terminate, early, last = f
                record = Step(
                    float(t), float(h), int(st), needed == "1", terminate == "1", early == "1",
                    float(last), values, y,
                )  # fmt: skip
            else:
                record = (float(f[0]), float(f[1]), int(f[2]), values)
        elif kind == "update":
            head, _, values = rest.partition(" : ")
            t, *flags, env = head.split()
            record = (
                float(t),
                tuple(int(f) for f in flags),
                env,
                tuple(map(float, values.split())),
            )
        elif kind == "call":
            name, status = rest.split()
            record = (name, status if status in ("instance", "NULL") else int(status))
        elif kind == "event":
            record = tuple(int(v) for v in rest.split())
        elif kind in ("log", "log2"):
            status, _, message = rest.partition(" ")
            record = (int(status), message)
        else:
            record = rest
        records.append((kind, record))
    return records


def run_host(host, fmu, scenario, *, starts=(), after=(), outputs=(), flags=(), stop, step,
             libpython=None, extra=(), variables=(), timeout=300):  # fmt: skip
    """The host run in an empty environment (`env -i`): starts {name: value} set in
    initialization mode, after {name: value} set after it, outputs the names printed per step."""
    cmd = [ENV, "-i", *(f"{k}={v}" for k, v in dict(variables).items()), str(host)]
    if libpython:
        cmd += ["-l", libpython]
    for name, value in dict(starts).items():
        cmd += ["-p", f"{fmu.spec(name)}={float(value)!r}"]
    for name, value in dict(after).items():
        cmd += ["-a", f"{fmu.spec(name)}={float(value)!r}"]
    if outputs:
        cmd += ["-o", ",".join(fmu.spec(n) for n in outputs)]
    cmd += [*flags, *extra, scenario, str(fmu.dir), fmu.model, fmu.token, repr(stop), repr(step)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    run = Run(proc.returncode, parse(proc.stdout), proc.stderr, proc.stdout)
    assert proc.returncode in (0, 3), proc.stdout + proc.stderr
    return run


def run_endstop(host, endstop3, scenario="run", flags=(), stop=3.5, libpython=None):
    run = run_host(
        host,
        endstop3,
        scenario,
        starts=ENDSTOP,
        outputs=("dx", "dv", "time"),
        flags=flags,
        stop=stop,
        step=0.1,
    )
    assert run.returncode == 0 and not run.stderr, run.stderr
    assert run.records[-1] == ("end", "")  # the scenario ran to its end
    return run


def _assert_final_closed_form(steps):
    dx, dv, time = steps[-1].y
    assert time == steps[-1].last == 3.5
    assert dx == pytest.approx(FINAL["dx"], abs=1e-12)
    assert dv == pytest.approx(FINAL["dv"], abs=1e-12)


def _assert_contiguous(steps):
    """Each step starts where the last one ended; the FMU's time is lastSuccessfulTime."""
    assert steps[0].t == 0.0
    for before, after in zip(steps, steps[1:]):
        assert after.t == before.last
    for s in steps:
        assert s.y[2] == s.last and s.status == 0 and not s.terminate


# ---- 1. no early return, no event flag without the permissions ---------------------------------


def test_without_permissions_no_early_return_and_no_event_flag(host, endstop3, fmu3_dir):
    run = run_endstop(host, endstop3)
    steps = run.steps()
    assert len(steps) == 35 and not run.of("event")
    for s in steps:
        assert not s.early and not s.needed
        assert s.last == s.t + s.h  # lastSuccessfulTime: the step's end
    _assert_contiguous(steps)
    _assert_final_closed_form(steps)
    # the impacts happened within the steps: dv changed sign three times
    assert np.count_nonzero(np.diff(np.sign([s.y[1] for s in steps]))) == 3
    # fmpy, the same FMU and grid: the same results, bit for bit
    ref = simulate_fmu(
        str(fmu3_dir / "EndStop.fmu"),
        start_values=ENDSTOP,
        stop_time=3.5,
        output_interval=0.1,
        output=["dx", "dv"],
        fmi_type="CoSimulation",
    )
    np.testing.assert_array_equal(ref["time"][1:], [s.last for s in steps])
    np.testing.assert_array_equal(ref["dx"][1:], [s.y[0] for s in steps])
    np.testing.assert_array_equal(ref["dv"][1:], [s.y[1] for s in steps])


# ---- 2. early return and event mode -----------------------------------------------------------


@pytest.mark.parametrize(
    "early,event_mode", [(True, False), (True, True), (False, True)], ids=["ER", "ER+EM", "EM"]
)
def test_early_return_and_event_mode_at_the_impacts(host, endstop3, fmu3_dir, early, event_mode):
    """The communication points and the final state as fmpy's run with the same permissions
    (bit for bit)."""
    flags = ("-E",) * early + ("-M",) * event_mode
    run = run_endstop(host, endstop3, flags=flags)
    steps = run.steps()
    _assert_contiguous(steps)
    _assert_final_closed_form(steps)
    for s in steps:
        assert s.last <= s.t + s.h
        assert s.early == (s.last < s.t + s.h)  # earlyReturn exactly when it ended before t + h
        if not s.early:
            assert s.last == s.t + s.h
    returned = [s.last for s in steps if s.early]
    if early:
        assert returned == pytest.approx(IMPACTS, abs=1e-12)
        flagged = [s.last for s in steps if s.needed]
    else:
        assert returned == []
        # event mode alone: the steps that contain an impact are flagged
        flagged = [next(i for i in IMPACTS if s.t < i < s.last) for s in steps if s.needed]
    assert flagged == (pytest.approx(IMPACTS, abs=1e-12) if event_mode else [])
    # event mode after each flagged step: fmi3EnterEventMode, fmi3UpdateDiscreteStates (no
    # update needed, no termination, nothing changed, no next event), fmi3EnterStepMode pass
    assert run.of("event") == [(0, 0, 0, 0, 0, 0, 0, 0)] * (3 if event_mode else 0)
    kinds = [k for k, _ in run.records if k in ("step", "event")]
    for i, s in enumerate(steps):  # the event line follows its step
        position = [j for j, k in enumerate(kinds) if k == "step"][i]
        follows = position + 1 < len(kinds) and kinds[position + 1] == "event"
        assert follows == s.needed
    assert not [m for m in run.of("log")]  # nothing logged
    ref = simulate_fmu(
        str(fmu3_dir / "EndStop.fmu"),
        start_values=ENDSTOP,
        stop_time=3.5,
        output_interval=0.1,
        output=["dx", "dv"],
        fmi_type="CoSimulation",
        early_return_allowed=early,
        use_event_mode=event_mode,
    )
    # fmpy records a point twice after event mode: its distinct times are the host's points
    np.testing.assert_array_equal(np.unique(ref["time"]), [0.0] + [s.last for s in steps])
    assert (ref["dx"][-1], ref["dv"][-1]) == steps[-1].y[:2]


@pytest.mark.parametrize("answer", ["decline", "accept"])
def test_the_intermediate_update_callback_from_c(host, endstop3, answer):
    """With early return allowed and an intermediate-update callback, the FMU offers each impact
    (intermediateStepFinished, canReturnEarly, getting allowed, the host's instance environment);
    the outputs read in the callback are those just after the impact. Declined, the steps go on
    to the grid (event mode flags them); accepted, they return at the impacts as without a
    callback, bit for bit."""
    run = run_endstop(host, endstop3, flags=("-E", "-M", "-U", answer))
    offers = run.of("update")
    assert [t for t, *_ in offers] == pytest.approx(IMPACTS, abs=1e-12)
    for t, flags, env, (dx, dv, time) in offers:
        assert flags == (0, 1, 1, 1) and env == "env"  # no set requested, get allowed
        assert time == t and abs(dx) == pytest.approx(0.25, abs=1e-12)  # at a stop
    assert [dv for *_, (_, dv, _) in offers] == pytest.approx([-0.5, 0.25, -0.125], abs=1e-12)
    steps = run.steps()
    _assert_contiguous(steps)
    _assert_final_closed_form(steps)
    flagged = [s for s in steps if s.needed]
    assert len(flagged) == len(run.of("event")) == 3
    if answer == "decline":
        assert not any(s.early for s in steps) and len(steps) == 35
        assert all(s.t < i < s.last for s, i in zip(flagged, IMPACTS))
    else:
        plain = run_endstop(host, endstop3, flags=("-E", "-M")).steps()
        assert [(s.t, s.h, s.early, s.needed, s.last, s.text) for s in steps] == [
            (s.t, s.h, s.early, s.needed, s.last, s.text) for s in plain
        ]


# ---- 3. errors returned as errors ---------------------------------------------------------------


def test_an_invalid_parameter_makes_exit_initialization_mode_return_error(host, mass3):
    run = run_host(host, mass3, "run", starts={"m": 0.0}, stop=0.3, step=0.1)
    assert run.returncode == 0, run.stderr
    assert run.calls("fmi3SetFloat64") == [0]
    assert run.calls("fmi3ExitInitializationMode") == [ERROR]
    assert any(
        st == ERROR and "Invalid parameter m = 0.0 kg: valid range (0.0, inf)" in m
        for st, m in run.of("log")
    )
    assert not run.steps() and run.records[-1] == ("end", "")


def test_a_parameter_set_after_initialization_is_an_error_and_the_instance_steps_on(host, mass3):
    run = run_host(
        host,
        mass3,
        "run",
        starts={"m": 2.0},
        after={"m": 5.0, "v": 1.0, "flange_a.f": -4.0},  # a parameter, an output, an input
        outputs=("m", "v"),
        stop=0.3,
        step=0.1,
    )
    assert run.returncode == 0, run.stderr
    assert run.calls("fmi3ExitInitializationMode") == [0]
    assert run.calls("fmi3SetFloat64") == [0, ERROR, ERROR, 0]
    logged = [m for st, m in run.of("log") if st == ERROR]
    assert len(logged) == 2
    assert "parameter m is fixed after initialization" in logged[0]
    assert "v is an output and cannot be set" in logged[1]
    steps = run.steps()
    assert [s.status for s in steps] == [0, 0, 0]
    assert [s.y[0] for s in steps] == [2.0] * 3  # m kept
    assert steps[-1].y[1] == pytest.approx(0.6, abs=1e-12)  # m a = -f: v = 2 t
    assert run.calls("fmi3Terminate") == [0]


def test_a_host_ignoring_an_early_return_gets_an_error(host, endstop3):
    """A host that continues from its grid point after an early return (0.3 s, the FMU at the
    impact, 0.25 s): fmi3DoStep returns fmi3Error with the reason, lastSuccessfulTime the FMU's
    time, no early return flagged."""
    run = run_endstop(host, endstop3, flags=("-E", "-I"), stop=0.6)
    steps = run.steps()
    assert [s.status for s in steps] == [0, 0, 0, ERROR]
    assert steps[2].early and steps[2].last == pytest.approx(0.25, abs=1e-12)
    refused = steps[3]
    assert refused.t == pytest.approx(0.3) and refused.last == steps[2].last
    assert not refused.early and not refused.needed and refused.text == steps[2].text
    ((status, message),) = run.of("log")
    assert status == ERROR and "doStep refused: currentCommunicationPoint = 0.3" in message
    assert "is not the time of EndStop, 0.25" in message


# ---- 4. functions the FMU lacks -----------------------------------------------------------------

UNSUPPORTED = [
    "fmi3GetFloat32",
    "fmi3SetInt64",
    "fmi3GetInt8",
    "fmi3GetString",
    "fmi3GetClock",
    "fmi3GetOutputDerivatives",
    "fmi3GetDirectionalDerivative",
    "fmi3EnterConfigurationMode",
]


def test_unsupported_functions_return_error_and_the_host_survives(host, mass3):
    run = run_host(host, mass3, "unsupported", outputs=("v",), stop=0.1, step=0.1)
    assert run.returncode == 0, run.stderr
    calls = dict(run.of("call"))
    for name in UNSUPPORTED:
        assert calls[name] == ERROR, name
    messages = [m for _, m in run.of("log")]
    assert messages[: len(UNSUPPORTED)] == [
        f"logStatusError: contactfmu: {name} is not supported by this FMU" for name in UNSUPPORTED
    ]
    assert calls["fmi3InstantiateModelExchange"] == "NULL"
    assert "co-simulation only" in messages[-1]
    for name in ("fmi3DoStep", "fmi3GetFloat64", "fmi3GetFloat32", "fmi3Reset"):
        assert calls[f"{name}(NULL)"] == ERROR, name  # a NULL instance: fmi3Error, no crash
    (step,) = run.steps()
    assert step.status == 0 and step.last == 0.1 and step.y == (0.0,)  # steps on afterwards
    assert run.calls("fmi3Terminate") == [0] and run.records[-1] == ("end", "")


# ---- 5. a NULL logger ---------------------------------------------------------------------------


def test_a_null_logger_works_and_errors_still_return_error(host, mass3, endstop3):
    """logMessage = NULL at instantiation: the same statuses, nothing logged, no crash."""
    null = ("-N",)
    invalid = run_host(host, mass3, "run", starts={"m": 0.0}, flags=null, stop=0.3, step=0.1)
    assert invalid.returncode == 0, invalid.stderr
    assert invalid.calls("fmi3ExitInitializationMode") == [ERROR]
    after = run_host(
        host,
        mass3,
        "run",
        starts={"m": 2.0},
        after={"m": 5.0, "flange_a.f": -4.0},
        outputs=("m", "v"),
        flags=null,
        stop=0.3,
        step=0.1,
    )
    assert after.calls("fmi3SetFloat64") == [0, ERROR, 0]
    assert [s.y for s in after.steps()][-1] == pytest.approx((2.0, 0.6), abs=1e-12)
    lacking = run_host(
        host, mass3, "unsupported", outputs=("v",), flags=null, stop=0.1, step=0.1,
    )  # fmt: skip
    calls = dict(lacking.of("call"))
    assert [calls[name] for name in UNSUPPORTED] == [ERROR] * len(UNSUPPORTED)
    events = run_endstop(host, endstop3, flags=("-E", "-M", *null))
    assert [s.last for s in events.steps() if s.early] == pytest.approx(IMPACTS, abs=1e-12)
    for r in (invalid, after, lacking, events):
        assert r.returncode == 0 and r.records[-1] == ("end", ""), r.stderr
        assert not r.of("log") and not r.stderr


# ---- 6. fmi3Reset keeps the configuration -------------------------------------------------------


def test_reset_keeps_the_early_return_permission(host, endstop3):
    """fmi3Reset in step mode and after fmi3Terminate: initialized again, the instance returns
    early at the same impacts (and flags them: event mode), bit for bit as before the reset."""
    run = run_endstop(host, endstop3, "reset", flags=("-E", "-M"), stop=1.5)
    assert run.calls("fmi3Reset") == [0, 0]
    assert run.calls("fmi3ExitInitializationMode") == [0, 0, 0]
    first = run.steps("first")
    for phase in ("first", "after-reset", "after-terminate-reset"):
        steps = run.steps(phase)
        _assert_contiguous(steps)  # after a reset: from time 0 again
        assert [s.last for s in steps if s.early] == pytest.approx(IMPACTS[:2], abs=1e-12)
        assert [s.last for s in steps if s.needed] == [s.last for s in steps if s.early]
        assert [(s.t, s.h, s.early, s.needed, s.last, s.text) for s in steps] == [
            (s.t, s.h, s.early, s.needed, s.last, s.text) for s in first
        ]
        assert len(run.of("event", phase)) == 2


# ---- 7. FMU state at an early return ------------------------------------------------------------


def test_state_saved_at_an_early_return_restores_bit_for_bit(host, endstop3):
    """fmi3GetFMUState at the first impact (an early return at 0.25 s), serialized and
    deserialized; the run on to 3.5 s, the runs from the restored and from the deserialized
    state, and a second instance's run from the bytes print the same outputs (%.17g)."""
    run = run_endstop(host, endstop3, "state", flags=("-E", "-M"))
    to_event = run.steps("to-first-event")
    assert to_event[-1].early and to_event[-1].last == pytest.approx(0.25, abs=1e-12)
    assert not any(s.early for s in to_event[:-1])
    for name in (
        "fmi3GetFMUState",
        "fmi3SerializedFMUStateSize",
        "fmi3SerializeFMUState",
        "fmi3DeserializeFMUState",
        "fmi3SetFMUState",
        "fmi3FreeFMUState",
    ):
        assert run.calls(name) and set(run.calls(name)) == {0}, (name, run.calls(name))
    (size,) = run.of("size")
    assert int(size) > 0
    assert run.of("freed") == ["1 1"]  # fmi3FreeFMUState returns NULL in its argument
    on = run.steps("on")
    assert on[0].t == to_event[-1].last
    assert [s.last for s in on if s.early] == pytest.approx(IMPACTS[1:], abs=1e-12)
    _assert_final_closed_form(on)

    def printed(steps):
        return [(s.t, s.h, s.status, s.needed, s.early, s.last, s.text) for s in steps]

    for phase in ("restored", "deserialized", "other-instance"):
        assert printed(run.steps(phase)) == printed(on), phase
        assert len(run.of("event", phase)) == 2
    assert not run.of("log")


def test_state_functions_misused_return_error_and_leak_nothing(host, endstop3):
    """NULL state pointers are fmi3Error with a message (pythonfmu3's library alone dereferences
    them: the host crashes); altered or empty bytes make fmi3DeserializeFMUState return fmi3Error
    and no state, the reason logged; a state pointer handed back to fmi3GetFMUState holds the new
    state afterwards (restored, the step from there repeats bit for bit) and the state it held is
    freed: 3000 such calls grow the resident memory by less than 2 MB (pythonfmu3's library alone
    leaked each, about 4 MB for 3000 of Mass's smaller states)."""
    run = run_endstop(host, endstop3, "state-misuse", flags=("-E",))
    calls = dict(run.of("call"))
    for name in ("fmi3GetFMUState", "fmi3SetFMUState", "fmi3SerializedFMUStateSize"):
        assert calls[f"{name}(NULL)"] == ERROR, name
        assert (ERROR, f"logStatusError: contactfmu: {name}: the FMU state is NULL") in run.of(
            "log"
        )
    assert calls["fmi3SerializeFMUState(NULL)"] == ERROR
    assert calls["fmi3FreeFMUState(NULL)"] == 0  # freeing nothing is allowed
    assert calls["fmi3DeserializeFMUState(altered)"] == ERROR
    assert calls["fmi3DeserializeFMUState(empty)"] == ERROR
    assert run.of("deserialized") == ["NULL", "NULL"]
    logged = [m for _, m in run.of("log")]
    assert any("corrupted" in m and "bytes altered or truncated" in m for m in logged)
    assert any("its 0 bytes do not begin with" in m for m in logged)
    assert calls["fmi3GetFMUState(again)"] == 0 and calls["fmi3SetFMUState"] == 0
    (on,), (restored,) = run.steps("on"), run.steps("restored")
    assert on.early and on.last == pytest.approx(
        0.25, abs=1e-12
    )  # from 0.2 s: the state handed back
    assert (restored.t, restored.status, restored.last, restored.text) == (
        on.t, 0, on.last, on.text,
    )  # fmt: skip
    ((n, handed_back, baseline, _),) = [tuple(map(int, m.split())) for m in run.of("memory")]
    assert n == 3000 and handed_back < 2_000_000, (handed_back, baseline)


# ---- 8. the FMI 2.0 and FMI 3.0 builds in one process -------------------------------------------


def test_fmi2_and_fmi3_builds_in_one_process_step_alike(host, endstop3, fmu_dir, tmp_path):
    fmu2 = extract(fmu_dir / "EndStop.fmu", tmp_path / "EndStop2")
    run = run_host(
        host,
        endstop3,
        "both",
        starts=ENDSTOP,
        outputs=("dx", "dv"),
        stop=3.5,
        step=0.1,
        extra=("-2", f"{fmu2.dir},{fmu2.token}"),
    )
    assert run.returncode == 0, run.stderr
    assert run.of("fmi2GetVersion") == ["2.0"]
    assert run.calls("fmi2Instantiate") == ["instance"]
    assert run.calls("fmi2ExitInitializationMode") == [0]
    assert run.calls("fmi3ExitInitializationMode") == [0]
    steps3, steps2 = run.steps(), run.of("step2")
    assert len(steps3) == len(steps2) == 35
    for s3, (t, h, status, text) in zip(steps3, steps2):
        assert (s3.t, s3.h, s3.status, status) == (t, h, 0, 0)
        assert s3.text == text  # bit for bit
    dx, dv = steps3[-1].y
    assert dx == pytest.approx(FINAL["dx"], abs=1e-12)
    assert dv == pytest.approx(FINAL["dv"], abs=1e-12)
    assert not run.of("log") and not run.of("log2")


# ---- libpython ----------------------------------------------------------------------------------


def test_a_libpython_the_host_loaded_first_is_used(host, endstop3, libpython):
    """A host that dlopened libpython with RTLD_GLOBAL before the FMU (-l): the FMU uses that
    one, and steps as when it loads libpython itself, bit for bit."""
    own = run_endstop(host, endstop3, flags=("-E", "-M"))
    preloaded = run_endstop(host, endstop3, flags=("-E", "-M"), libpython=libpython)
    assert [s.text for s in preloaded.steps()] == [s.text for s in own.steps()]
    assert not preloaded.of("log") and not preloaded.stderr


def test_without_a_python_the_fmi3_fmu_refuses_to_instantiate_and_says_what_it_looked_for(
    host, mass3, tmp_path
):
    """The build's record names a missing libpython of a Python 3.99 that no machine has, and
    CONTACTFMU_LIBPYTHON a missing file: fmi3InstantiateCoSimulation returns NULL, and the host's
    logger gets every place looked in and what to install."""
    fmu = Fmu(tmp_path / "Mass", mass3.model, mass3.token, mass3.vr, mass3.type)
    shutil.copytree(mass3.dir, fmu.dir)
    gone = tmp_path / "gone" / "libpython3.99.so.1.0"
    (fmu.dir / "binaries" / "x86_64-linux" / "Mass_libpython.txt").write_text(
        f"version=3.99\nlibpython={gone}\nprefix={gone.parent}\nexecutable=python3.99\n"
    )
    missing = tmp_path / "missing" / "libpython3.so"
    run = run_host(
        host, fmu, "run", stop=0.1, step=0.1, variables={"CONTACTFMU_LIBPYTHON": missing}
    )
    assert run.returncode == 3
    assert run.calls("fmi3InstantiateCoSimulation") == ["NULL"]
    ((status, first),) = run.of("log")
    assert status == ERROR
    assert first.startswith("logStatusError: contactfmu: no Python runtime found"), first
    message = run.stdout
    for looked_for in (
        "a libpython already in the process: none",
        f"CONTACTFMU_LIBPYTHON = {missing}: cannot open",
        f"the building Python's {gone}: cannot open",
        "soname libpython3.99.so.1.0: cannot open",
        "soname libpython3.99.so: cannot open",
    ):
        assert f"\n  - {looked_for}" in message, (looked_for, message)
    assert "Install Python 3.99 with its shared library" in message


def test_the_fmi3_fmu_records_the_python_that_built_it_and_its_token(mass3):
    """The same record as the FMI 2.0 build's, plus the instantiation token."""
    text = (mass3.dir / "binaries" / "x86_64-linux" / "Mass_libpython.txt").read_text()
    record = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert os.path.samefile(record["libpython"], hostenv.libpython())
    assert record["token"] == mass3.token
    assert text == python_record() + f"token={mass3.token}\n"


# ---- instantiation arguments the FMU cannot use -------------------------------------------------

BAD_ARGUMENTS = {
    "name-not-utf8": "the instance name is not valid UTF-8",
    "name-null": "the instance name is NULL",
    "token-wrong": "the instantiationToken {00000000-0000-0000-0000-000000000000} is not this FMU's",
    "token-null": "the instantiationToken (NULL) is not this FMU's",
    "resources-missing": "/nowhere/ does not exist",
    "resources-null": "no resources folder given (NULL)",
    "resources-not-fmu": "no readable slavemodule.txt there",
}


@pytest.mark.parametrize("case", list(BAD_ARGUMENTS))
def test_instantiation_with_arguments_the_fmu_cannot_use_returns_null_and_says_why(
    host, mass3, case
):
    """pythonfmu3's library alone crashed the host (a name that is not UTF-8), hung for more than
    25 s (a resource path without the FMU's Python code) or took any token. A crash, a hang
    (the 60 s timeout) or an instance fails here."""
    run = run_host(host, mass3, "run", stop=0.1, step=0.1, extra=("-X", case), timeout=60)
    assert run.returncode == 3, run.stdout + run.stderr
    assert run.calls("fmi3InstantiateCoSimulation") == ["NULL"]
    ((status, message),) = run.of("log")
    assert status == ERROR and message.startswith("logStatusError: contactfmu: "), message
    assert BAD_ARGUMENTS[case] in message, message
    if case == "token-wrong":
        assert mass3.token in message  # the token expected


# ---- getters and setters misused ----------------------------------------------------------------


def test_getters_and_setters_refuse_a_wrong_nvalues_null_arrays_and_the_shims_value_references(
    host, endstop3
):
    """nValues must equal nValueReferences (every variable is a scalar): pythonfmu3's library
    alone returned fmi3OK for fmi3GetFloat64 with nValues too large, leaving a Python exception
    (SystemError) set. The value references of the shim's channel (CONTROL_VR ..) and derivative
    slots (DERIVATIVE_VR + vr), declared in no model description, are refused: early return set
    through them by an importer (CONTROL_VR, a Boolean) would have turned it on in an instance
    created without it. After the refused calls EndStop runs as without them, bit for bit."""
    undeclared = [CONTROL_VR + k for k in range(4)] + [DERIVATIVE_VR + endstop3.vr["dx"]]
    run = run_host(
        host,
        endstop3,
        "values",
        starts=ENDSTOP,
        outputs=("dx", "dv", "time"),
        stop=3.5,
        step=0.1,
        extra=("-V", ",".join(map(str, undeclared))),
    )
    assert run.returncode == 0 and run.records[-1] == ("end", ""), run.stderr
    calls = dict(run.of("call"))
    misused = [
        "fmi3GetFloat64(nValues+1)",
        "fmi3GetFloat64(nValues-1)",
        "fmi3SetFloat64(nValues+1)",
        "fmi3GetInt32(nValues+1)",
        "fmi3GetBoolean(nValues+1)",
        "fmi3GetFloat64(values=NULL)",
        "fmi3SetFloat64(vr=NULL)",
    ]
    probed = [f"{f}({vr})" for vr in undeclared for f in PROBES]
    for name in misused + probed:
        assert calls[name] == ERROR, name
    logged = [m for st, m in run.of("log") if st == ERROR]
    assert len(logged) == len(misused) + len(probed), logged
    assert "contactfmu: fmi3GetFloat64: nValues = 2, but the 1 value references" in logged[0]
    assert "nValues must be 1" in logged[0]
    for vr in undeclared:
        assert any(f"value reference {vr} is not a variable of this FMU" in m for m in logged)
    steps = run.steps()
    plain = run_endstop(host, endstop3).steps()
    assert not any(s.early for s in steps)  # early return was not turned on
    assert [(s.t, s.status, s.last, s.text) for s in steps] == [
        (s.t, s.status, s.last, s.text) for s in plain
    ]


PROBES = ("fmi3GetFloat64", "fmi3GetBoolean", "fmi3SetBoolean", "fmi3SetFloat64")
