"""The runs of a study (study.runs), without FMUs: value names and values as stored, the run id, the
grid, the samples (scaled from the seeded unit samples), explicit lists, and the command line's
--grid and --param specifications, each refusal with its message. Hand-computed expectations."""

import hashlib
import json
import math
import pickle
import warnings

import numpy as np
import pytest
from scipy.stats import qmc

from contactfmu.study.runs import (
    METHOD_NAMES,
    METHODS,
    OPTIONS,
    Run,
    Runs,
    StudyError,
    as_runs,
    explicit,
    grid,
    is_option,
    parse_grid,
    parse_range,
    run_id,
    samples,
    unit_samples,
)

OPTS = "stop_time, step, start_time, output_interval, scheme, rtol, atol"


def refused(fn, *args, **kw):
    with pytest.raises(StudyError) as err:
        fn(*args, **kw)
    assert isinstance(err.value, ValueError)
    return str(err.value)


def test_the_options_and_methods_are_those_documented():
    assert OPTIONS == (
        "stop_time",
        "step",
        "start_time",
        "output_interval",
        "scheme",
        "rtol",
        "atol",
    )
    assert METHODS == ("random", "lhs", "sobol", "halton")
    assert METHOD_NAMES == {
        "random": "Monte Carlo",
        "lhs": "Latin hypercube",
        "sobol": "Sobol",
        "halton": "Halton",
    }
    assert is_option("step") and not is_option("spring.c")


@pytest.mark.parametrize(
    "name, message",
    [
        (
            "",
            "run value name '': expected 'instance.variable' (a parameter or start value) or one "
            f"of the simulate() options {OPTS}",
        ),
        (
            3,
            "run value name 3: expected 'instance.variable' (a parameter or start value) or one "
            f"of the simulate() options {OPTS}",
        ),
        (
            "tolerance",
            "'tolerance' is neither 'instance.variable' (a parameter or start value) nor a "
            f"simulate() option; the options are: {OPTS}",
        ),
        (".c", "'.c': expected 'instance.variable', e.g. 'spring.c'"),
        ("spring.", "'spring.': expected 'instance.variable', e.g. 'spring.c'"),
    ],
)
def test_a_bad_value_name_is_refused(name, message):
    assert refused(Run, {name: 1.0}) == message


def test_run_values_as_stored():
    r = Run({"a.x": 2, "b.on": True, "c.off": np.bool_(False), "step": np.float32(0.5)})
    assert r.values == {"a.x": 2.0, "b.on": 1.0, "c.off": 0.0, "step": 0.5}
    assert all(type(v) is float for v in r.values.values())
    assert Run({"scheme": "jacobi", "a.b.c": 1.0}).values == {"scheme": "jacobi", "a.b.c": 1.0}


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("a.x", "1", "a.x = '1': a run value must be a number"),
        ("a.x", None, "a.x = None: a run value must be a number"),
        ("a.x", 1j, "a.x = 1j: a run value must be a number"),
        ("a.x", math.nan, "a.x = nan: a run value must be finite"),
        ("step", -math.inf, "step = -inf: a run value must be finite"),
        (
            "scheme",
            1.0,
            "scheme = 1.0: the scheme is a name (gauss-seidel, jacobi, implicit, adaptive)",
        ),
    ],
)
def test_a_bad_value_is_refused(name, value, message):
    assert refused(Run, {name: value}) == message


def test_run_id_is_the_hash_of_the_sorted_values():
    text = json.dumps([["a.x", "1.0"], ["step", "0.001"]])
    assert text == '[["a.x", "1.0"], ["step", "0.001"]]'
    expected = hashlib.sha256(text.encode()).hexdigest()[:16]
    assert expected == "5bd83dd6dbfcba75"  # the ids of resumed studies' files stay these
    assert run_id({"step": 1e-3, "a.x": 1}) == expected
    assert Run({"step": 1e-3, "a.x": 1}).run_id == expected
    scheme = hashlib.sha256(json.dumps([["scheme", "jacobi"]]).encode()).hexdigest()[:16]
    assert run_id({"scheme": "jacobi"}) == scheme == "cd775309e300e3e2"
    assert run_id({"a.x": 0.1}) != run_id({"a.x": 0.1 + 2**-55})  # exact values


def test_run_parameters_options_repr_and_pickle():
    r = Run({"spring.c": 1e4, "step": 1e-3, "mass.s_start": 0.5, "scheme": "implicit"})
    assert r.params == {"spring.c": 1e4, "mass.s_start": 0.5}
    assert r.options == {"step": 1e-3, "scheme": "implicit"}
    assert repr(Run({"a.x": 1})) == "Run({'a.x': 1.0})"
    back = pickle.loads(pickle.dumps(r))
    assert back.values == r.values and back.run_id == r.run_id
    assert r.__getstate__() == (r.values, r.run_id)


def test_runs_refuse_a_repeated_run_and_name_both():
    message = refused(Runs, [Run({"a.x": 1.0}), Run({"a.x": 2.0}), Run({"a.x": 1})])
    assert message == (
        "runs 0 and 2 are the same run ({'a.x': 1.0}): each run must differ from every other in "
        "at least one value"
    )
    message = refused(explicit, [{"a.x": 1.0}, {"a.x": 2.0}, {"a.x": 3.0}, {"a.x": 2.0}])
    assert message.startswith("runs 1 and 3 are the same run ({'a.x': 2.0})")


def test_runs_made_from_a_list_are_of_kind_list():
    runs = Runs([Run({"a.x": 1.0})])
    assert runs.kind == "list" and runs.axes is None and runs.ranges is None
    assert runs.method is None and runs.seed is None


def test_runs_names_in_first_seen_order_and_description():
    runs = explicit([{"b.y": 1.0, "a.x": 2.0}, {"c.z": 1.0, "a.x": 3.0}])
    assert runs.names == ["b.y", "a.x", "c.z"]
    assert runs.kind == "list" and runs.axes is None and runs.ranges is None
    assert runs.method is None and runs.seed is None
    assert runs.describe() == {"kind": "list", "count": 2}
    g = grid({"a.x": [1, 2], "step": 0.1})
    assert g.describe() == {"kind": "grid", "count": 2, "axes": {"a.x": [1.0, 2.0], "step": [0.1]}}
    s = samples(3, {"a.x": (1, 2), "b.y": (1, 100, "log")}, "halton", seed=5)
    assert s.describe() == {
        "kind": "samples",
        "count": 3,
        "ranges": {"a.x": [1.0, 2.0, False], "b.y": [1.0, 100.0, True]},
        "method": "halton",
        "seed": 5,
    }
    assert json.loads(json.dumps(s.describe())) == s.describe()


def test_grid_first_axis_slowest_with_options():
    runs = grid({"a.x": [1, 2], "b.y": (10.0, 20.0)}, options={"step": 1e-3})
    assert [r.values for r in runs] == [
        {"a.x": 1.0, "b.y": 10.0, "step": 1e-3},
        {"a.x": 1.0, "b.y": 20.0, "step": 1e-3},
        {"a.x": 2.0, "b.y": 10.0, "step": 1e-3},
        {"a.x": 2.0, "b.y": 20.0, "step": 1e-3},
    ]
    assert runs.kind == "grid" and runs.axes == {"a.x": [1.0, 2.0], "b.y": [10.0, 20.0]}
    assert runs.ranges is None and runs.method is None and runs.seed is None
    one = grid({"scheme": "jacobi", "a.x": 3})  # a single value, a name as well as a number
    assert [r.values for r in one] == [{"scheme": "jacobi", "a.x": 3.0}]
    seen = []
    per_run = grid(
        {"a.x": [1.0, 4.0]}, options=lambda v: seen.append(v) or {"stop_time": 2 * v["a.x"]}
    )
    assert [r.values for r in per_run] == [
        {"a.x": 1.0, "stop_time": 2.0},
        {"a.x": 4.0, "stop_time": 8.0},
    ]
    assert seen == [{"a.x": 1.0}, {"a.x": 4.0}]


def test_grid_refusals():
    assert refused(grid, {}) == "grid: give at least one axis {name: [values]}"
    assert refused(grid, {"a.x": []}) == "grid axis 'a.x' has no values"
    assert refused(grid, {"a.x": [1, 1.0]}) == "grid axis 'a.x' repeats a value: [1, 1.0]"
    assert refused(grid, {"a.": [1]}) == "'a.': expected 'instance.variable', e.g. 'spring.c'"
    assert refused(grid, {"a.x": [1]}, options={"a.x": 2.0, "step": 1.0, "b.y": 1.0}) == (
        "options a.x are also varied by the runs: give each name once"
    )
    message = refused(explicit, [{"b.y": 1.0, "a.x": 1.0}], options={"b.y": 1, "a.x": 2})
    assert message == "options a.x, b.y are also varied by the runs: give each name once"


def test_grid_with_a_single_number_or_name_that_repeats_nothing():
    runs = grid({"a.x": 0.0})
    assert [r.values for r in runs] == [{"a.x": 0.0}]


def test_unit_samples_refusals():
    assert refused(unit_samples, 4, 2, "grid") == (
        "sampling method 'grid': valid are random, lhs, sobol, halton"
    )
    for n in (0, -1, 2.0, "4"):
        assert refused(unit_samples, n, 2) == f"number of samples {n!r}: must be an integer >= 1"


def test_unit_samples_random_is_numpys_seeded_generator():
    assert np.array_equal(
        unit_samples(5, 3, "random", 11), np.random.default_rng(11).random((5, 3))
    )
    assert np.array_equal(unit_samples(1, 1), np.random.default_rng(0).random((1, 1)))


@pytest.mark.parametrize("method", ["lhs", "halton", "sobol"])
@pytest.mark.parametrize("n", [8, 6, 3, 1])
def test_unit_samples_qmc_engines_seeded_with_numpys_generator(method, n):
    engine = {"lhs": qmc.LatinHypercube, "sobol": qmc.Sobol, "halton": qmc.Halton}[method]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Sobol with n not a power of 2
        u = unit_samples(n, 2, method, 4)
        expected = engine(2, rng=np.random.default_rng(4)).random(n)
    assert u.shape == (n, 2) and np.array_equal(u, expected)
    if method == "lhs":  # one point in each of the n strata of each dimension
        for k in range(2):
            assert sorted(np.floor(u[:, k] * n).astype(int)) == list(range(n))


def test_sobol_with_a_power_of_two_is_the_balanced_base_2_set():
    u = unit_samples(16, 2, "sobol", 2)
    expected = qmc.Sobol(2, rng=np.random.default_rng(2)).random_base2(4)
    assert np.array_equal(u, expected)
    for k in range(2):  # a (0, 4, 2)-net: one point in each sixteenth of each axis
        assert sorted(np.floor(u[:, k] * 16).astype(int)) == list(range(16))


def test_samples_scale_the_unit_samples_linearly_or_in_log():
    ranges = {"a.x": (1, 3), "b.y": (1e2, 1e4, "log"), "c.z": (-1.0, 1.0, "linear")}
    runs = samples(4, ranges, "random", seed=9, options={"step": 1e-3})
    u = np.random.default_rng(9).random((4, 3))
    for r, (ua, ub, uc) in zip(runs, u):
        assert r.values["a.x"] == 1.0 + ua * 2.0
        assert r.values["b.y"] == pytest.approx(10 ** (2.0 + 2.0 * ub), rel=1e-14, abs=0)
        assert r.values["c.z"] == -1.0 + uc * 2.0
        assert r.values["step"] == 1e-3
        assert list(r.values) == ["a.x", "b.y", "c.z", "step"]
    assert runs.kind == "samples" and runs.method == "random" and runs.seed == 9
    assert runs.ranges == {
        "a.x": (1.0, 3.0, False),
        "b.y": (100.0, 1e4, True),
        "c.z": (-1.0, 1.0, False),
    }
    assert runs.axes is None
    default = samples(2, {"a.x": (0, 1)})  # Monte Carlo, seed 0
    assert [r.values["a.x"] for r in default] == list(np.random.default_rng(0).random((2, 1))[:, 0])
    assert (default.method, default.seed) == ("random", 0)


@pytest.mark.parametrize(
    "spec, expected",
    [
        ((1, 2), (1.0, 2.0, False)),
        ([1, 2, "linear"], (1.0, 2.0, False)),
        ((1, 2, False), (1.0, 2.0, False)),
        ((1, 2, "log"), (1.0, 2.0, True)),
        ((1, 2, True), (1.0, 2.0, True)),
        ((-2, -1), (-2.0, -1.0, False)),
    ],
)
def test_sampling_ranges(spec, expected):
    assert samples(1, {"a.x": spec}).ranges == {"a.x": expected}


@pytest.mark.parametrize(
    "spec, message",
    [
        ((1,), "range of 'a.x': (1,); give (lo, hi) or (lo, hi, 'log')"),
        ((1, 2, "log", 4), "range of 'a.x': (1, 2, 'log', 4); give (lo, hi) or (lo, hi, 'log')"),
        ((1, 2, "ln"), "range of 'a.x': (1, 2, 'ln'); give (lo, hi) or (lo, hi, 'log')"),
        ((2, 1), "range of 'a.x': lo = 2.0 must be below hi = 1.0"),
        ((1, 1), "range of 'a.x': lo = 1.0 must be below hi = 1.0"),
        ((0, 1, "log"), "range of 'a.x': a logarithmic range needs lo > 0, got 0.0"),
        ((-1, 1, True), "range of 'a.x': a logarithmic range needs lo > 0, got -1.0"),
        ((0, math.inf), "a.x = inf: a run value must be finite"),
    ],
)
def test_bad_sampling_ranges(spec, message):
    assert refused(samples, 2, {"a.x": spec}) == message


def test_samples_refusals():
    assert refused(samples, 2, {}) == "samples: give at least one range {name: (lo, hi)}"
    assert refused(samples, 2, {"a": (0, 1)}).startswith("'a' is neither")


def test_explicit_and_as_runs():
    assert refused(explicit, []) == "the list of runs is empty"
    assert refused(explicit, [{"a.x": 1.0}, [("a.x", 2.0)]]) == (
        "run 1: [('a.x', 2.0)] is not a dict {name: value}"
    )
    runs = explicit(({"a.x": k} for k in (1, 2)), options=lambda v: {"step": v["a.x"] / 10})
    assert [r.values for r in runs] == [{"a.x": 1.0, "step": 0.1}, {"a.x": 2.0, "step": 0.2}]
    assert runs.kind == "list"
    assert as_runs(runs) is runs
    listed = as_runs([Run({"a.x": 1.0}), Run({"a.x": 2.0})])
    assert type(listed) is Runs and listed.kind == "list"
    assert [r.values for r in listed] == [{"a.x": 1.0}, {"a.x": 2.0}]
    dicts = as_runs(iter([{"a.x": 5}]))
    assert type(dicts) is Runs and [r.values for r in dicts] == [{"a.x": 5.0}]
    assert refused(as_runs, []) == "the list of runs is empty"
    assert refused(as_runs, [Run({"a.x": 1.0}), {"a.x": 2.0}]) == (
        "run 0: Run({'a.x': 1.0}) is not a dict {name: value}"
    )


@pytest.mark.parametrize(
    "spec, name, values",
    [
        ("spring.c=1e3:1e5:3:log", "spring.c", [1e3, 1e4, 1e5]),
        ("spring.c=1:16:5:log", "spring.c", [1.0, 2.0, 4.0, 8.0, 16.0]),
        ("a.x=0.5:0.125:3:log", "a.x", [0.5, 0.25, 0.125]),
        ("mass.s_start=0:1:5", "mass.s_start", [0.0, 0.25, 0.5, 0.75, 1.0]),
        ("mass.s_start=0:1:3:lin", "mass.s_start", [0.0, 0.5, 1.0]),
        ("a.x=2:2:1", "a.x", [2.0]),
        ("a.x=2:3:2", "a.x", [2.0, 3.0]),
        ("step=1e-3,5e-4", "step", [1e-3, 5e-4]),
        ("a.x=7", "a.x", [7.0]),
        ("scheme=jacobi,implicit", "scheme", ["jacobi", "implicit"]),
        ("a.x=1=2", None, None),
    ],
)
def test_grid_specifications(spec, name, values):
    if name is None:
        assert refused(parse_grid, spec) == "'a.x=1=2': '1=2' is not a finite number"
        return
    got_name, got = parse_grid(spec)
    assert got_name == name and len(got) == len(values)
    assert all(type(x) is type(v) for x, v in zip(got, values))
    if name == "scheme":
        assert got == values
    else:
        assert got == pytest.approx(values, rel=1e-15, abs=0)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("spring.c", "--grid 'spring.c': expected NAME=VALUES, e.g. spring.c=1e3:1e5:9"),
        ("=1,2", "--grid '=1,2': expected NAME=VALUES, e.g. spring.c=1e3:1e5:9"),
        ("spring.c=", "--grid 'spring.c=': expected NAME=VALUES, e.g. spring.c=1e3:1e5:9"),
        ("stepsize=1,2", "'stepsize' is neither"),
        ("a.x=1:2", "--grid 'a.x=1:2': expected lo:hi:n, lo:hi:n:log or a,b,c"),
        ("a.x=1:2:3:4:5", "--grid 'a.x=1:2:3:4:5': expected lo:hi:n, lo:hi:n:log or a,b,c"),
        ("a.x=1:2:3:ln", "--grid 'a.x=1:2:3:ln': expected lo:hi:n, lo:hi:n:log or a,b,c"),
        (
            "a.x=1:2:x",
            "--grid 'a.x=1:2:x': the number of values 'x' must be an integer >= 2 (1 if lo = hi)",
        ),
        ("a.x=1:1:x", "--grid 'a.x=1:1:x': the number of values 'x' must be an integer"),
        ("a.x=1:1:1.0", "--grid 'a.x=1:1:1.0': the number of values '1.0' must be an integer"),
        (
            "a.x=1:2:0",
            "--grid 'a.x=1:2:0': the number of values '0' must be an integer >= 2 (1 if lo = hi)",
        ),
        (
            "a.x=1:1:0",
            "--grid 'a.x=1:1:0': the number of values '0' must be an integer >= 2 (1 if lo = hi)",
        ),
        (
            "a.x=1:2:1",
            "--grid 'a.x=1:2:1': the number of values '1' must be an integer >= 2 (1 if lo = hi)",
        ),
        ("a.x=0:2:3:log", "--grid 'a.x=0:2:3:log': a geometric (log) grid needs lo, hi > 0"),
        ("a.x=1:-2:3:log", "--grid 'a.x=1:-2:3:log': a geometric (log) grid needs lo, hi > 0"),
        ("a.x=1:0:3:log", "--grid 'a.x=1:0:3:log': a geometric (log) grid needs lo, hi > 0"),
        ("a.x=x:2:3", "'a.x=x:2:3': 'x' is not a finite number"),
        ("a.x=1:inf:3", "'a.x=1:inf:3': 'inf' is not a finite number"),
        ("a.x=1,nan", "'a.x=1,nan': 'nan' is not a finite number"),
    ],
)
def test_bad_grid_specifications_are_named(spec, message):
    assert refused(parse_grid, spec).startswith(message)


def test_grid_specification_with_a_negative_geometric_range_runs_on_the_linear_one():
    assert parse_grid("a.x=-1:-4:2:lin") == ("a.x", [-1.0, -4.0])


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("gap.c=1e3:1e6:log", ("gap.c", (1e3, 1e6, True))),
        ("gap.c=1e3:1e6:lin", ("gap.c", (1e3, 1e6, False))),
        ("gap.c=-1:2", ("gap.c", (-1.0, 2.0, False))),
        ("step=1e-4:1e-3", ("step", (1e-4, 1e-3, False))),
    ],
)
def test_range_specifications(spec, expected):
    assert parse_range(spec) == expected


@pytest.mark.parametrize(
    "spec, message",
    [
        ("gap.c", "--param 'gap.c': expected NAME=VALUES, e.g. spring.c=1e3:1e5:9"),
        ("gap.c=1", "--param 'gap.c=1': expected NAME=lo:hi or NAME=lo:hi:log"),
        ("gap.c=1:2:3:4", "--param 'gap.c=1:2:3:4': expected NAME=lo:hi or NAME=lo:hi:log"),
        ("gap.c=1:2:ln", "--param 'gap.c=1:2:ln': expected NAME=lo:hi or NAME=lo:hi:log"),
        ("gap.c=2:1", "range of 'gap.c': lo = 2.0 must be below hi = 1.0"),
        ("gap.c=0:1:log", "range of 'gap.c': a logarithmic range needs lo > 0, got 0.0"),
        ("gap.c=a:1", "'gap.c=a:1': 'a' is not a finite number"),
        ("gap.c=0:b", "'gap.c=0:b': 'b' is not a finite number"),
    ],
)
def test_bad_range_specifications_are_named(spec, message):
    assert refused(parse_range, spec) == message
