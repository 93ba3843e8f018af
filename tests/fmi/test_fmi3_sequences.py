"""Random FMI 3.0 call sequences against every FMI 3.0 FMU (hypothesis), statuses checked against
the FMI 3.0 text.

Hypothesis draws how the FMU is instantiated (eventModeUsed, earlyReturnAllowed, an
intermediate-update callback and its answers: decline, accept, return at a later time, or a call
made from inside it), then a sequence of calls in any order: initialization, getters and setters
(parameters, inputs, outputs; extreme and non-finite values), fmi3DoStep (at the FMU's time or
not, odd step sizes), event mode, terminate, reset, the FMU state functions (saved, restored,
serialized, deserialized as written or with one field edited and the seal recomputed),
fmi3SetDebugLogging (declared categories or not) and the functions the FMUs do not support.
The calls run in a child process (fmi3_sequence_driver.py), so that a crash or a hang fails the
test instead of ending the run. Asserted for every call:

* never fmi3Fatal, never a crash, never a call that does not return within its limit;
* fmi3Error exactly when the FMU logged an error message (the status tells the truth);
* a call the state machine does not allow in the present state, or inside the intermediate-update
  callback, is fmi3Error with a message naming the call and the state; an unsupported function
  is fmi3Error with a message naming it;
* what the standard says must succeed does (entering and leaving the modes in order, fmi3Reset,
  fmi3Terminate, the FMU state functions on states of this FMU, setting an input to a finite
  value, fmi3SetDebugLogging with declared categories), and what it says must fail fails (a
  doStep at another time or with a step that is not finite and > 0, a parameter set after
  initialization, an undeclared log category, a state whose contents were edited);
* after a successful fmi3DoStep: lastSuccessfulTime in (t, t + h], earlyReturn exactly when it is
  before t + h and only if allowed, eventHandlingNeeded only in event mode; every Real output
  finite after a successful getter; every fmi3DoStep within 1 s + min(h, 1 s) of CPU.

Profiles (tests/conftest.py): "ci" runs a fixed seed and a few sequences per FMU; "nightly" many
(CONTACTFMU_FMI3_SEQUENCES, default 250 per FMU):

    python -m pytest tests/fmi/test_fmi3_sequences.py --hypothesis-profile=nightly --hypothesis-seed=1
"""

import json
import math
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from fmpy import extract, read_model_description
from hypothesis import given, settings
from hypothesis import strategies as st

from contactfmu.components import NAMES
from contactfmu.fmi.shim import LOG_CATEGORIES

DRIVER = Path(__file__).with_name("fmi3_sequence_driver.py")
CALL_TIMEOUT = 30.0  # s of wall time for one call (a hang)
STEP_CPU_BOUND = 1.0  # s of CPU per doStep, plus the step size up to 1 s
EXAMPLES = (
    settings.default.max_examples
    if settings.default.max_examples < 100
    else int(os.environ.get("CONTACTFMU_FMI3_SEQUENCES", "250"))
)
OK, WARNING, DISCARD, ERROR, FATAL = range(5)
INSTANTIATED, INITIALIZATION, EVENT, STEP, TERMINATED = (
    "Instantiated",
    "Initialization Mode",
    "Event Mode",
    "Step Mode",
    "Terminated",
)
# where each call may be made: FMI 3.0.2, 2.3.3 "State Machine and Semantics" (FMU State Settable:
# fmi3SetDebugLogging, fmi3Reset and the FMU state functions everywhere; Instantiated allows the
# getters, its table "Get variable start values"; Initialized: fmi3Terminate) and 4.2.1 (Step Mode)
ALLOWED = {
    "enterInitializationMode": {INSTANTIATED},
    "exitInitializationMode": {INITIALIZATION},
    "enterEventMode": {STEP},
    "updateDiscreteStates": {EVENT},
    "enterStepMode": {EVENT},
    "doStep": {STEP},
    "terminate": {EVENT, STEP},
    "reset": {INSTANTIATED, INITIALIZATION, EVENT, STEP, TERMINATED},
    "get": {INSTANTIATED, INITIALIZATION, EVENT, STEP, TERMINATED},
    "set": {INSTANTIATED, INITIALIZATION, EVENT, STEP},
    "setDebugLogging": {INSTANTIATED, INITIALIZATION, EVENT, STEP, TERMINATED},
}
for _name in ("getFMUState", "setFMUState", "freeFMUState", "serialize", "deserialize"):
    ALLOWED[_name] = ALLOWED["reset"]
C_NAME = {
    "get": "fmi3Get",
    "set": "fmi3Set",
    "serialize": "fmi3Serialize",
    "deserialize": "fmi3DeserializeFMUState",
}
UNSUPPORTED = [
    "fmi3GetFloat32",
    "fmi3SetInt64",
    "fmi3GetString",
    "fmi3SetBinary",
    "fmi3GetClock",
    "fmi3GetOutputDerivatives",
    "fmi3GetDirectionalDerivative",
    "fmi3EnterConfigurationMode",
    "fmi3SetTime",
    "fmi3GetContinuousStates",
]
# calls made from inside the intermediate-update callback: only the getters (and
# fmi3SetDebugLogging) are allowed there
INSIDE = [
    ["doStep", 0.0, 0.1],
    ["terminate"],
    ["reset"],
    ["getFMUState", 2],
    ["enterEventMode"],
    ["freeInstance"],
    ["get"],
    ["setDebugLogging", True, ["logAll"]],
]


def c_name(call):
    name = call[0]
    return C_NAME.get(name, "fmi3" + name[0].upper() + name[1:])


# ---- the child process --------------------------------------------------------------------------


class Worker:
    """The driver process of one FMU: plans in, records out; restarted after a crash or hang."""

    _all = {}

    @classmethod
    def of(cls, path):
        if path not in cls._all:
            cls._all[path] = cls(path)
        return cls._all[path]

    def __init__(self, path):
        md = read_model_description(path)
        self.md = md
        self.args = [
            extract(path, unzipdir=tempfile.mkdtemp(prefix="fmi3seq_")),
            md.coSimulation.modelIdentifier,
            md.instantiationToken,
        ]
        self.proc = None

    def start(self):
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, str(DRIVER), *self.args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )

    def run(self, plan):
        """The records of the plan's calls, and None or why the process ended (crash, hang)."""
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        self.proc.stdin.write((json.dumps(plan) + "\n").encode())
        self.proc.stdin.flush()
        records, buffer = [], b""
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], CALL_TIMEOUT)
            if not ready:
                self.proc.kill()
                self.proc.wait()
                self.proc = None
                return records, f"hang: no answer within {CALL_TIMEOUT} s"
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                code = self.proc.wait()
                self.stderr.seek(0)
                tail = self.stderr.read()[-1500:].decode(errors="replace")
                self.proc = None
                return records, f"crash: exit status {code}: {tail}"
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                record = json.loads(line)
                if record.get("done"):
                    return records, None
                records.append(record)


# ---- strategies ---------------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.floats(-2.0, 2.0),
    st.sampled_from([0.0, 1.0, 1e3, -1e300, 1e300, 5e-324, math.nan, math.inf, -math.inf]),
)
STEPS = st.one_of(
    st.sampled_from([1e-3, 1e-2, 0.1, 0.1, 0.3]),
    st.floats(1e-6, 1.0),
    st.sampled_from([1e10, 0.0, -1e-3, math.inf, math.nan]),
)


def edits(md):
    """(attribute path, value) edits of a serialized state that no state of the FMU has."""
    reals = [v.name.replace(".", "_") for v in md.modelVariables if v.type == "Float64"]
    others = [
        v.name.replace(".", "_")
        for v in md.modelVariables
        if v.type in ("Int32", "Boolean") and v.name != "time"
    ]
    options = [
        st.sampled_from(
            [
                ["time", "x"],
                ["time", math.inf],
                ["time", math.nan],
                ["model", "Other"],
                ["_initialized", "yes"],
                ["_failed", 3],
                ["_good", [1.0]],
                ["_step_size", -1.0],
                ["_coupler", "x"],
                ["_coupler.mu", "x"],
                ["_coupler.mu", math.nan],
                ["_p", "x"],
            ]
        ),
        st.tuples(
            st.sampled_from([r for r in reals if r != "time"]),
            st.sampled_from(["x", math.nan, math.inf, None, [1.0]]),
        ).map(list),
    ]
    if others:
        options.append(
            st.tuples(st.sampled_from(others), st.sampled_from([1.5, "x", None])).map(list)
        )
    return st.one_of(options)


def calls(md):
    variables = [v for v in md.modelVariables if v.causality in ("parameter", "input", "output")]
    setter = st.sampled_from(variables).flatmap(
        lambda v: st.tuples(
            st.just("set"),
            st.just(v.name),
            st.just(v.type),
            NUMBERS
            if v.type == "Float64"
            else st.integers(-3, 5)
            if v.type == "Int32"
            else st.booleans(),
        ).map(list)
    )
    slot = st.integers(0, 2)
    return st.one_of(
        setter,
        st.tuples(st.just("doStep"), st.sampled_from(["now", "now", "now", "off"]), STEPS).map(
            list
        ),
        st.sampled_from(
            [
                ["get"],
                ["enterInitializationMode", 0.0],
                ["enterInitializationMode", math.nan],
                ["exitInitializationMode"],
                ["enterEventMode"],
                ["updateDiscreteStates"],
                ["enterStepMode"],
                ["terminate"],
                ["reset"],
            ]
        ),
        st.tuples(st.sampled_from(["getFMUState", "setFMUState", "freeFMUState"]), slot).map(list),
        st.tuples(st.just("serialize"), slot).map(list),
        st.tuples(st.just("deserialize"), slot, st.none() | edits(md)).map(list),
        st.tuples(
            st.just("setDebugLogging"),
            st.booleans(),
            st.lists(st.sampled_from([*LOG_CATEGORIES, "undeclared"]), max_size=3),
        ).map(list),
        st.tuples(st.just("unsupported"), st.sampled_from(UNSUPPORTED)).map(list),
    )


ANSWERS = st.one_of(
    st.sampled_from([["decline"], ["accept"]]),
    st.tuples(st.just("later"), st.sampled_from([1e-4, 1e-2, 0.3])).map(list),
    st.sampled_from(INSIDE).map(lambda c: ["call", *c]),
)


def plans(md):
    running = st.lists(
        st.one_of(
            st.tuples(st.just("doStep"), st.just("now"), st.sampled_from([0.01, 0.1, 0.3])).map(
                list
            ),
            calls(md),
        ),
        max_size=20,
    )
    prefix = st.booleans()
    return st.fixed_dictionaries(
        {
            "instantiate": st.fixed_dictionaries(
                {
                    "eventModeUsed": st.booleans(),
                    "earlyReturnAllowed": st.booleans(),
                    "callback": st.booleans(),
                }
            ),
            "answers": st.lists(ANSWERS, min_size=1, max_size=4),
            "prefix": prefix,
            "calls": running,
        }
    )


def prepared(plan):
    """The plan with its usual start (initialization, then step mode) if it asks for one."""
    calls = plan["calls"]
    if plan["prefix"]:
        start = [["enterInitializationMode", 0.0], ["exitInitializationMode"]]
        if plan["instantiate"]["eventModeUsed"]:
            start.append(["enterStepMode"])
        calls = start + calls
    return {**plan, "calls": calls}


# ---- the FMI 3.0 text: what each call must return ------------------------------------------------


class Model:
    """What the standard lets the importer expect of the instance: its state machine's state and
    what the FMU's own rules add (initialized, error state after a failed step, saved states)."""

    def __init__(self, md, instantiate):
        self.md = md
        self.vars = {v.name: v for v in md.modelVariables}
        self.event_mode = instantiate["eventModeUsed"]
        self.early = instantiate["earlyReturnAllowed"]
        self.callback = instantiate["callback"]
        self.reset()
        self.slots, self.blobs = {}, {}

    def reset(self):
        self.mode, self.initialized, self.failed = INSTANTIATED, False, False

    def snapshot(self):
        return (self.initialized, self.failed)


def check_status(where, record):
    status, log = record["status"], record["log"]
    errors = [m for s, m in log if s >= ERROR]
    assert status != FATAL, f"{where}: fmi3Fatal {log}"
    if errors:
        assert status == ERROR, f"{where}: status {status} although the FMU logged {errors}"
    elif status is not None:
        assert status in (OK, WARNING, DISCARD), f"{where}: status {status} with nothing logged"
    return status


def must_fail(where, record, *words):
    assert record["status"] == ERROR, f"{where}: must be fmi3Error, was {record['status']}"
    text = " ".join(m for s, m in record["log"] if s >= ERROR)
    for word in words:
        assert word in text, f"{where}: the message does not name {word!r}: {text!r}"


def must_succeed(where, record):
    assert record["status"] in (OK, WARNING), f"{where}: must succeed: {record}"


def check_plan(md, plan, records):
    model = Model(md, plan["instantiate"])
    assert records and records[0]["call"] == "instantiate" and records[0]["ok"], records[:1]
    for k, record in enumerate(records[1:]):
        call = record["call"]
        where = f"call {k} {call} in {model.mode}"
        status = check_status(where, record)
        name = call[0]
        if name == "unsupported":
            must_fail(where, record, call[1])
            continue
        if status is None:  # nothing to call (no saved state in that slot)
            continue
        if model.mode not in ALLOWED[name]:
            must_fail(where, record, c_name(call), model.mode)
            continue
        check_allowed(model, where, call, record)


def check_allowed(model, where, call, record):
    name, status = call[0], record["status"]
    succeeded = status in (OK, WARNING)
    if name == "enterInitializationMode":
        if math.isfinite(call[1]):
            must_succeed(where, record)
        if succeeded:
            model.mode = INITIALIZATION
    elif name == "exitInitializationMode":
        if succeeded:
            model.mode, model.initialized = (EVENT if model.event_mode else STEP), True
        else:
            model.failed = True
    elif name == "enterEventMode":
        if model.event_mode:
            must_succeed(where, record)
            model.mode = EVENT
        else:
            must_fail(where, record, "fmi3EnterEventMode", "eventModeUsed")
    elif name in ("updateDiscreteStates", "enterStepMode", "terminate", "reset"):
        must_succeed(where, record)
        if name == "reset":
            model.reset()
        elif name != "updateDiscreteStates":
            model.mode = STEP if name == "enterStepMode" else TERMINATED
    elif name == "set":
        var = model.vars[call[1]]
        value = call[3]
        finite = var.type != "Float64" or math.isfinite(value)
        if var.causality == "input" and finite:
            must_succeed(where, record)
        elif var.causality == "parameter" and finite and not model.initialized:
            must_succeed(where, record)
        elif var.causality == "parameter" and model.initialized:
            must_fail(where, record, var.name)
        elif var.causality == "output" or not finite:
            must_fail(where, record, var.name)
    elif name == "get":
        check_values(where, record)
        if not succeeded and model.initialized:
            model.failed = True
    elif name == "doStep":
        check_step(model, where, record)
    elif name == "setDebugLogging":
        if set(call[2]) <= set(LOG_CATEGORIES):
            must_succeed(where, record)
        else:
            must_fail(where, record, "undeclared")
    elif name == "getFMUState":
        must_succeed(where, record)
        model.slots[call[1]] = model.snapshot()
    elif name == "setFMUState":
        must_succeed(where, record)
        model.initialized, model.failed = model.slots[call[1]]
    elif name == "freeFMUState":
        must_succeed(where, record)
        model.slots.pop(call[1], None)
    elif name == "serialize":
        must_succeed(where, record)
        model.blobs[call[1]] = model.slots[call[1]]
    elif name == "deserialize":
        if call[2] is None:
            must_succeed(where, record)
            model.slots[call[1]] = model.blobs[call[1]]
        else:
            must_fail(where, record, "refused")
            model.slots.pop(call[1], None)


def check_values(where, record):
    if record["status"] in (OK, WARNING):
        bad = {
            k: v
            for k, v in record["values"].items()
            if isinstance(v, str) and not math.isfinite(float(v))
        }
        assert not bad, f"{where}: non-finite outputs after a successful getter: {bad}"


def check_step(model, where, record):
    t, h, status = record["t"], record["h"], record["status"]
    assert record["cpu"] < STEP_CPU_BOUND + (min(h, 1.0) if math.isfinite(h) and h > 0 else 0.0), (
        f"{where}: fmi3DoStep took {record['cpu']:.2f} s of CPU"
    )
    if record["call"][1] == "off" or not (h > 0 and math.isfinite(t + h)):
        must_fail(where, record, "refused")
    elif not model.initialized:
        must_fail(where, record, "not initialized")
    if status in (OK, WARNING):
        last = record["lastSuccessfulTime"]
        assert t < last <= t + h, f"{where}: lastSuccessfulTime {last!r} not in ({t}, {t + h}]"
        assert record["earlyReturn"] == (last < t + h), f"{where}: {record}"
        assert model.early or not record["earlyReturn"], f"{where}: early return not allowed"
        assert model.event_mode or not record["eventHandlingNeeded"], f"{where}: event mode"
    elif status == ERROR:
        model.failed = True
    for callback in record["callbacks"]:
        assert model.callback and model.early, f"{where}: an intermediate update not asked for"
        if callback["inside"]:
            inner, inner_status, log, gave = callback["inside"]
            inside = {"call": [inner], "status": inner_status, "log": log, **gave}
            check_status(f"{where}, inside the callback: {inner}", inside)
            if inner == "get":
                check_values(f"{where}, inside the callback", inside)
            elif inner == "setDebugLogging":
                must_succeed(f"{where}, inside the callback: {inner}", inside)
            elif inner == "freeInstance":
                assert any("Intermediate Update Mode" in m for s, m in log), log
            else:
                must_fail(
                    f"{where}, inside the callback: {inner}",
                    inside,
                    c_name([inner]),
                    "Intermediate Update Mode",
                )


@pytest.fixture(scope="module")
def fmu3_paths(fmu3_dir):
    return {name: str(fmu3_dir / f"{name}.fmu") for name in NAMES}


@pytest.mark.parametrize("model", list(NAMES))
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_random_fmi3_call_sequences_keep_the_fmi3_contract(fmu3_paths, model, data):
    worker = Worker.of(fmu3_paths[model])
    plan = prepared(data.draw(plans(worker.md)))
    records, ended = worker.run(plan)
    assert ended is None, f"{ended} after {records[-1:]} ({len(records)} calls of {plan})"
    check_plan(worker.md, plan, records)


@pytest.mark.parametrize("answer", [["accept"], ["decline"], ["later", 0.3], ["later", 2e-4]])
def test_an_intermediate_update_gains_no_energy_whatever_its_answer(fmu3_paths, answer):
    """EndStop with rigid stops (mode 1) and both masses given, the intermediate-update callback
    returning at each impact, declining it or asking for a later time, the importer stepping 1 ms
    from wherever the FMU returned: the relative speed never grows beyond its start (restitution
    ci <= 1) and each fmi3DoStep is within the CPU bound. A force planned after an early return
    for the rest of the step asked (about 1e-17 s where an impact falls on a step's end) and held
    over the next 1 ms would drive |dv| to 1e11 m/s within 40 ms."""
    worker = Worker.of(fmu3_paths["EndStop"])
    params = {"mode": 1, "m1": 1.0, "m2": 2.0, "ci": 0.8, "l1": 0.01, "l2": 0.01}
    sets = [["set", k, "Int32" if k == "mode" else "Float64", v] for k, v in params.items()]
    steps = [["doStep", "now", h] for h in [1e-3] * 60 + [0.1] * 5]
    plan = {
        "instantiate": {"eventModeUsed": True, "earlyReturnAllowed": True, "callback": True},
        "answers": [answer],
        "prefix": False,
        "calls": [["enterInitializationMode", 0.0], *sets, ["set", "ctr1.v", "Float64", 1.0]]
        + [["exitInitializationMode"], ["enterStepMode"]]
        + [c for step in steps for c in (step, ["get"])],
    }
    records, ended = worker.run(plan)
    assert ended is None, ended
    check_plan(worker.md, plan, records)
    speeds = [abs(float(r["values"]["dv"])) for r in records if r.get("values")]
    assert max(speeds) <= 1.0 + 1e-9, max(speeds)
    assert sum(len(r.get("callbacks", ())) for r in records) > 0  # impacts were offered
