"""Property-based tests of the FMI contract of every FMU (hypothesis).

Hypothesis draws parameters, input sequences (moderate, extreme, denormal and non-finite values),
communication step sizes (odd ones included) and FMU-state save/restore points, and drives each
FMU through the raw FMI 2.0 functions (fmpy's ctypes bindings, statuses as returned). Asserted:

* the status of every call is the truth: fmi2OK/fmi2Warning exactly when the FMU logged no error
  during the call, fmi2Error (never fmi2Fatal) when it did;
* after a successful fmi2DoStep or fmi2GetReal every Real output is finite;
* a refused input leaves the instance usable (no error state without a failed fmi2DoStep);
* fmi2DoStep returns within a bounded CPU time (1 s + the step, at most 2 s: steps up to 1e300 s,
  whatever the inputs and the calls before);
* state continuation: from a saved state (same instance, or serialized into a fresh instance)
  the same inputs give bit-identical outputs and statuses;
* the documented invariants of each component (the ElastoGap law never pulls, nor f, with or
  without m_a/m_b; hardstop force 0 in the
  gap; EndStop Fi = 0 when free and Pl = Ff*dv; MassWithStopAndFriction between its stops and
  lossPower = f*v; Spring, Damper: their laws).

Profiles (registered in conftest.py): "ci" (default: fixed seed, a few examples per FMU, part of
the test suite) and "nightly" (random seeds, many examples):

    python -m pytest tests/fmi/test_properties.py --hypothesis-profile=nightly
"""

import ctypes
import gc
import itertools
import math
import struct
import time

import pytest
from fmpy import read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave, fmi2Real, fmi2ValueReference
from hypothesis import event, given
from hypothesis import strategies as st

from contactfmu.components import NAMES
from contactfmu.cosim.instances import LOGS, callbacks, extracted

OK, WARNING, DISCARD, ERROR, FATAL = range(5)
STEP_CPU_BOUND = 1.0  # s of CPU per doStep, plus the step size up to 1 s
_names = itertools.count()
_extracted = {}

EXTREME = [1e300, -1e300, 1.7976931348623157e308, -1.7976931348623157e308, 5e-324, -5e-324, 1e-300]
NONFINITE = [math.nan, math.inf, -math.inf]


# ---- the FMU under test, through its raw FMI functions ----------------------------------------


class Raw:
    """One FMU instance: raw FMI calls that return the status, with the log lines of each call."""

    def __init__(self, path):
        path = str(path)
        if path not in _extracted:
            _extracted[path] = (read_model_description(path), extracted(path))
        self.md, unzip = _extracted[path]
        self.vars = {v.name: v for v in self.md.modelVariables}
        self.name = f"prop{next(_names)}"
        self.log = LOGS[self.name] = []
        self.fmu = FMU2Slave(
            guid=self.md.guid,
            unzipDirectory=unzip,
            modelIdentifier=self.md.coSimulation.modelIdentifier,
            instanceName=self.name,
        )
        self.fmu.instantiate(callbacks=callbacks(), loggingOn=False)
        self.f = self.fmu._functions
        self.c = self.fmu.component
        self.outputs = [
            v for v in self.md.modelVariables if v.causality == "output" and v.type == "Real"
        ]
        self.out_vr = (fmi2ValueReference * len(self.outputs))(
            *[v.valueReference for v in self.outputs]
        )
        self.out_buf = (fmi2Real * len(self.outputs))()

    def call(self, what, fn):
        """Run fn() -> status; check that the status tells whether the FMU logged an error."""
        before = len(self.log)
        status = fn()
        errors = [m for s, m in self.log[before:] if s >= ERROR]
        assert status != FATAL, f"{what}: fmi2Fatal ({errors})"
        if errors:
            assert status == ERROR, (
                f"{what}: returned {status} although the FMU logged an error: {errors}"
            )
        else:
            assert status in (OK, WARNING), f"{what}: returned {status} with no error logged"
        return status

    def set_value(self, name, value):
        var = self.vars[name]
        vr = (fmi2ValueReference * 1)(var.valueReference)
        if var.type == "Real":
            buf = (fmi2Real * 1)(value)
            fn = self.f["fmi2SetReal"]
        elif var.type == "Integer":
            buf = (ctypes.c_int * 1)(int(value))
            fn = self.f["fmi2SetInteger"]
        else:
            buf = (ctypes.c_int * 1)(int(bool(value)))
            fn = self.f["fmi2SetBoolean"]
        return self.call(f"set {name} = {value!r}", lambda: fn(self.c, vr, 1, buf))

    def outputs_now(self, what):
        """Every Real output: (status, values); finite whenever the call succeeded."""
        status = self.call(
            f"fmi2GetReal after {what}",
            lambda: self.f["fmi2GetReal"](self.c, self.out_vr, len(self.outputs), self.out_buf),
        )
        values = list(self.out_buf)
        if status <= WARNING:
            bad = {v.name: x for v, x in zip(self.outputs, values) if not math.isfinite(x)}
            assert not bad, f"non-finite outputs with status {status} after {what}: {bad}"
        return status, dict(zip((v.name for v in self.outputs), values))

    def do_step(self, t, h):
        # the CPU bound is the FMU's: no collection of the test process's garbage (a full one, in
        # a process that has run hundreds of tests, can take seconds) is timed with it
        gc.disable()
        try:
            start = time.process_time()
            status = self.call(
                f"fmi2DoStep({t!r}, {h!r})", lambda: self.f["fmi2DoStep"](self.c, t, h, 1)
            )
            cpu = time.process_time() - start
        finally:
            gc.enable()
        bound = STEP_CPU_BOUND + (min(h, 1.0) if math.isfinite(h) and h > 0 else 0.0)
        assert cpu < bound, f"fmi2DoStep({t!r}, {h!r}) took {cpu:.2f} s of CPU"
        return status

    def init(self, params):
        self.fmu.setupExperiment(startTime=0.0)
        for name, value in params.items():
            assert self.set_value(name, value) <= WARNING, (name, value, self.log[-3:])
        self.call(
            "fmi2EnterInitializationMode", lambda: self.f["fmi2EnterInitializationMode"](self.c)
        )
        return self.call(
            "fmi2ExitInitializationMode", lambda: self.f["fmi2ExitInitializationMode"](self.c)
        )

    def free(self):
        try:
            self.fmu.terminate()
        except FMICallException:
            pass
        self.fmu.freeInstance()
        LOGS.pop(self.name, None)


# ---- strategies ---------------------------------------------------------------------------------


def real_parameter(var):
    """Valid values mostly (the refusal of invalid ones is tested in test_slave_contract.py and
    test_fmi_contract.py): the start value, its range, or scales around it."""
    start = float(var.start)
    lo = float(var.min) if var.min is not None else None
    hi = float(var.max) if var.max is not None else None
    exclusive = "must be > 0" in (var.description or "")
    options = [st.just(start)]
    if lo is not None and hi is not None:
        options.append(st.floats(lo, hi, exclude_min=exclusive))
    elif start > 0.0:
        options.append(st.floats(-3.0, 3.0).map(lambda e: start * 10.0**e))
        if lo == 0.0 and not exclusive:
            options.append(st.just(0.0))
    elif lo is not None:
        options.append(st.floats(lo + 1e-3, lo + 10.0))
    else:
        options.append(st.floats(-1.0, 1.0))
    return st.one_of(options)


def parameter(var):
    if var.type == "Real":
        return real_parameter(var)
    if var.type == "Integer":
        return (
            st.integers(int(var.min), int(var.max))
            if var.min is not None
            else st.just(int(var.start))
        )
    return st.booleans()


# parameters whose random values would only test refusals already covered elsewhere, or whose
# combination with others the component constrains
FIXED = {
    "MassWithStopAndFriction": {"s_start": 0.0, "L": 0.0, "smin": -1.0, "smax": 1.0},
    "ElastoGap": {"f_ref": 0.0},
    "Sine": {"startTime": 0.0},
}


def parameters(md):
    fixed = FIXED.get(md.modelName, {})
    chosen = {
        v.name: parameter(v)
        for v in md.modelVariables
        if v.causality == "parameter" and v.name not in fixed
    }
    return st.fixed_dictionaries(chosen).map(lambda p: {**p, **fixed})


def input_value():
    return st.one_of(
        st.floats(-1.0, 1.0),
        st.floats(-1e3, 1e3),
        st.sampled_from(EXTREME),
        st.sampled_from(NONFINITE),
    ).filter(lambda x: True)


STEPS = st.one_of(
    st.sampled_from([1e-4, 1e-3, 1e-2, 0.1]),
    st.floats(1e-6, 1.0),
    st.sampled_from([1e10, 1e100, 1e300]),
    st.sampled_from([0.0, -1e-3, math.inf, math.nan]),
)


def plan(md):
    """A run: parameters, then steps of (inputs to set, step size)."""
    inputs = [v.name for v in md.modelVariables if v.causality == "input" and v.type == "Real"]
    step = st.tuples(
        st.dictionaries(st.sampled_from(inputs), input_value(), max_size=len(inputs))
        if inputs
        else st.just({}),
        STEPS,
    )
    return st.tuples(
        parameters(md),
        st.lists(step, min_size=1, max_size=12),
        st.integers(0, 11),
        st.integers(1, 6),
    )


# ---- documented invariants ----------------------------------------------------------------------


def invariants(model, params, out, inputs):
    if model == "ElastoGap":
        assert out["f_c"] + out["f_d"] <= 0.0, (
            f"the ElastoGap law pulls: f_c + f_d = {out['f_c'] + out['f_d']!r}"
        )
        assert abs(out["f_d"]) <= abs(out["f_c"]), "|f_d| > |f_c|"
        # (with m_a/m_b, f is the held coupling force: it never pulls either)
        assert out["f"] <= 0.0, f"ElastoGap pulls: f = {out['f']!r}"
    elif model == "TranslationalHardstop" and not params["m_a"] and not params["m_b"]:
        if params["b"] > 2e-10 and abs(out["s_rel"]) < params["b"] / 2:
            assert out["F"] == 0.0, f"force {out['F']!r} in the gap (s_rel = {out['s_rel']!r})"
    elif model == "EndStop":
        assert out["Pl"] == pytest.approx(out["Ff"] * out["dv"], rel=1e-12, abs=1e-300), (
            "Pl != Ff*dv"
        )
        if not params["friction"] and not params["m1"] and not params["m2"] and out["stop"] == 0:
            assert out["Fi"] == 0.0, f"Fi = {out['Fi']!r} while free"
    elif model == "MassWithStopAndFriction":
        assert params["smin"] - 1e-12 <= out["s"] <= params["smax"] + 1e-12
        assert out["lossPower"] == pytest.approx(out["f"] * out["v"], rel=1e-12, abs=1e-300)
    elif model == "Spring":
        s_rel = inputs["flange_b.s"] - inputs["flange_a.s"]
        expected = params["c"] * (s_rel - params["s_rel0"])
        if math.isfinite(expected):
            assert out["flange_b.f"] == pytest.approx(expected, rel=1e-15, abs=0.0)
    elif model == "Damper":
        expected = params["d"] * (inputs["flange_b.v"] - inputs["flange_a.v"])
        if math.isfinite(expected):
            assert out["flange_b.f"] == pytest.approx(expected, rel=1e-15, abs=0.0)


def outputs_of(fmu, name):
    """The non-Real outputs the invariants need (stop state of the EndStop)."""
    if name == "EndStop":
        vr = (fmi2ValueReference * 1)(fmu.vars["stop"].valueReference)
        buf = (ctypes.c_int * 1)()
        fmu.call("fmi2GetInteger(stop)", lambda: fmu.f["fmi2GetInteger"](fmu.c, vr, 1, buf))
        return {"stop": buf[0]}
    return {}


# ---- the properties -----------------------------------------------------------------------------


def run_steps(fmu, model, params, steps, t, inputs, record=None):
    """Set the inputs and step; returns the time, or None once the instance is in error state
    (after a failed fmi2DoStep or outputs that cannot be computed from the inputs: the only
    failures that may leave it unusable). record: list to append (statuses, outputs) to."""
    for values, h in steps:
        for name, value in values.items():
            status = fmu.set_value(name, value)
            if status <= WARNING:
                inputs[name] = value
            else:  # refused (non-finite): the previous value is kept
                assert not math.isfinite(value) or fmu.vars[name].causality != "input", fmu.log[-2:]
        before = len(fmu.log)
        status = fmu.do_step(t, h)
        if status > WARNING:
            assert not any("error state" in m for s, m in fmu.log[before:]), (
                f"a refused call (input or step size) left the instance unusable: {fmu.log[-4:]}"
            )
        got, out = fmu.outputs_now(
            f"doStep to {t + h!r}" if status <= WARNING else "a refused doStep"
        )
        if record is not None:  # bit patterns: NaN compares equal to itself here
            record.append(
                (status, got, [(k, struct.pack("<d", x)) for k, x in sorted(out.items())])
            )
        if status <= WARNING:
            t = t + h
        elif math.isfinite(h) and h > 0:
            return None  # a failed step (not a refused step size): error state
        if got > WARNING:
            return None  # the outputs cannot be computed from these inputs
        invariants(model, params, {**out, **outputs_of(fmu, model)}, inputs)
    return t


@pytest.mark.parametrize("model", list(NAMES))
@given(data=st.data())
def test_fmi_contract_under_random_input(fmu_dir, model, data):
    path = fmu_dir / f"{model}.fmu"
    md = _extracted[str(path)][0] if str(path) in _extracted else read_model_description(str(path))
    params, steps, save_at, replay = data.draw(plan(md))
    fmu = Raw(path)
    try:
        if fmu.init(params) > WARNING:
            assert any(
                "Invalid parameter" in m or "initialization failed" in m
                for s, m in fmu.log
                if s >= ERROR
            ), fmu.log[-3:]
            event("parameters refused")
            return
        inputs = {
            v.name: float(v.start)
            for v in md.modelVariables
            if v.causality == "input" and v.type == "Real"
        }
        save_at = min(save_at, len(steps))
        t = run_steps(fmu, model, params, steps[:save_at], 0.0, inputs)
        if t is None:
            event("error state before the state was saved")
            return
        event("state saved and replayed")
        state = fmu.fmu.getFMUstate()
        saved_inputs = dict(inputs)
        tail = steps[save_at : save_at + replay] or steps[:1]
        first = []
        run_steps(fmu, model, params, tail, t, dict(inputs), first)

        # the same instance, back to the saved state
        fmu.fmu.setFMUstate(state)
        again = []
        run_steps(fmu, model, params, tail, t, dict(saved_inputs), again)
        assert again == first, "continuation from the saved state differs"

        # another instance of the FMU, from the serialized state
        blob = fmu.fmu.serializeFMUstate(state)
        fmu.fmu.freeFMUstate(state)
        other = Raw(path)
        try:
            assert other.init(params) <= WARNING
            restored = other.fmu.deSerializeFMUstate(blob)
            other.fmu.setFMUstate(restored)
            other.fmu.freeFMUstate(restored)
            elsewhere = []
            run_steps(other, model, params, tail, t, dict(saved_inputs), elsewhere)
            assert elsewhere == first, (
                "continuation of the serialized state in another instance differs"
            )
        finally:
            other.free()
    finally:
        fmu.free()


# Sequences that once kept fmi2DoStep from returning (a fast oscillation's turning points over a
# step of 1e10 .. 1e300 s, walked one by one): each contact element with its inertias, then the
# calls; run_steps asserts the CPU bound and the status of every call.
LONG_STEPS = [
    (
        "ElastoGap",
        {"m_b": 1.0, "c": 1e5, "d": 20.0},
        [({}, 1e10), ({"flange_a.v": 0.01}, 1e100)],
    ),
    (
        "TranslationalHardstop",
        {"m_b": 1.0, "b": 0.01, "c": 1e5, "d": 20.0},
        [({}, 1e300), ({"flange_b.v": -1e300}, 1e10)],
    ),
    (
        "EndStop",
        {"m1": 1.0, "m2": 2.0},
        [({}, 1e-4), ({"ctr1.a": 0.01}, 1e10), ({"ctr2.v": 1e300, "ctr1.x": 1e-3}, 1.0)],
    ),
    (
        "ElastoGap",
        {"m_b": 1.0, "c": 1e5, "d": 20.0},
        [({"flange_b.s": 5e-324}, 1e-3), ({"flange_b.v": -1.0}, 1e300)],
    ),
]


@pytest.mark.parametrize("model, params, steps", LONG_STEPS)
def test_a_long_step_returns_within_the_bound_after_these_calls(fmu_dir, model, params, steps):
    fmu = Raw(fmu_dir / f"{model}.fmu")
    try:
        assert fmu.init(params) <= WARNING
        md = fmu.md
        starts = {"Real": float, "Integer": int, "Boolean": lambda x: x == "true"}
        params = {
            **{
                v.name: starts[v.type](v.start)
                for v in md.modelVariables
                if v.causality == "parameter"
            },
            **params,
        }
        inputs = {
            v.name: float(v.start)
            for v in md.modelVariables
            if v.causality == "input" and v.type == "Real"
        }
        run_steps(fmu, model, params, steps, 0.0, inputs)
    finally:
        fmu.free()
