"""The monolithic references (contactfmu.monolithic) are independent of the FMUs' physics: the
module imports nothing from contactfmu.components, contactfmu.mechanics or contactfmu.fmi, and the contact laws it
writes out again agree with values derived here analytically from the documentation (MSL 4.1
ElastoGap; MapleSim Translational Hardstop). Nothing here comes from the FMUs' code."""

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import beta

import contactfmu.family.reference as family_reference
import contactfmu.family.rigid as family_rigid
import contactfmu.family.systems as family_systems
import contactfmu.monolithic as monolithic
from contactfmu.monolithic import elastogap_impact, hardstop_mass

FORBIDDEN = ("contactfmu.components", "contactfmu.mechanics", "contactfmu.fmi")


def forbidden_imports(source):
    """The imports of `source` (a module of the package contactfmu, one level below it) that
    reach contactfmu.components, contactfmu.mechanics or contactfmu.fmi, absolute or relative, as (line, text)."""
    bad = []

    def reaches(name):
        return any(name == f or name.startswith(f + ".") for f in FORBIDDEN)

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            bad += [(node.lineno, a.name) for a in node.names if reaches(a.name)]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            elif node.level == 1:  # from .x import y / from . import x, inside contactfmu
                base = "contactfmu" + ("." + node.module if node.module else "")
            else:  # beyond the package: cannot be contactfmu's modules
                continue
            names = (
                [base]
                if node.module and reaches(base)
                else [base + "." + a.name for a in node.names]
            )
            bad += [(node.lineno, n) for n in names if reaches(n)]
        elif isinstance(node, ast.Call):  # importlib.import_module("...mechanics...") / __import__
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                bad += [(node.lineno, ast.unparse(node))]
    return bad


def test_checker_catches_every_import_form():
    """The import check itself can fail: each way of reaching the FMUs' physics is caught, the
    legitimate imports are not."""
    for text in (
        "from .mechanics import motion",
        "from . import components",
        "from . import mechanics",
        "from .components.ElastoGap.law import force",
        "import contactfmu.components.ElastoGap.law",
        "from contactfmu.components.TranslationalHardstop import law",
        "from contactfmu import fmi",
        "from .fmi.slave import Slave",
        "import importlib\nimportlib.import_module('contactfmu.mechanics')",
    ):
        assert forbidden_imports(text), text
    for text in (
        "import numpy as np",
        "from scipy.integrate import solve_ivp",
        "from .cosim import compare",
        "from . import cosim",
        "from contactfmu.mechanicsless import x",
    ):
        assert not forbidden_imports(text), text


def test_monolithic_imports_nothing_from_the_fmus_physics():
    """A reference that calls the function the FMU runs checks only the coupling, not
    the law. monolithic.py (parsed with ast) imports nothing from contactfmu.physics or
    contactfmu.fmus, neither absolutely nor relatively (.mechanics), nor through importlib."""
    path = Path(monolithic.__file__)
    assert path.name == "monolithic.py" and path.parent.name == "contactfmu"
    assert forbidden_imports(path.read_text()) == []


@pytest.mark.parametrize(
    "module", [family_systems, family_reference, family_rigid], ids=lambda m: m.__name__
)
def test_the_generated_systems_and_their_reference_import_nothing_from_the_fmus_physics(module):
    """The test systems and their monolithic reference (contactfmu.family.systems, .reference,
    .rigid, one level below the package: `..` there is contactfmu) name nothing of the FMUs' code."""
    source = Path(module.__file__).read_text().replace("from ..", "from .")
    assert forbidden_imports(source) == []


def closed_form_elastogap_impact(m, c, d, v0):
    """A mass m at flange_b hitting a fixed wall at v0 through an MSL ElastoGap with n = 1,
    s_ref = 1 (f_c = c*x, x = s_rel - s_rel0 < 0; f_d = clamp(d*w, f_c, -f_c); the body gets
    -f), derived here piece by piece:

    1. approach, d*w < c*x: f_d = f_c, f = 2*c*x: m*x'' = -2*c*x, x = -v0/W*sin(W*t), W = sqrt(2c/m),
       until tan(W*t1) = d*W/c (the damper force reaches f_c);
    2. linear, |d*w| <= -c*x: m*x'' + d*x' + c*x = 0 (damped oscillator, closed form), until
       c*x + d*w = 0 (the damper force reaches -f_c);
    3. separation, f = f_c + (-f_c) = 0: the mass flies off at constant w until x = 0.

    Returns (restitution w_out/v0, contact time, largest penetration)."""
    W = math.sqrt(2.0 * c / m)
    t1 = math.atan(d * W / c) / W
    x1, w1 = -v0 / W * math.sin(W * t1), -v0 * math.cos(W * t1)
    alpha = d / (2.0 * m)
    wd = math.sqrt(c / m - alpha**2)
    B = (w1 + alpha * x1) / wd

    def x(t):
        return math.exp(-alpha * t) * (x1 * math.cos(wd * t) + B * math.sin(wd * t))

    def w(t):
        e = math.exp(-alpha * t)
        return e * (
            -alpha * (x1 * math.cos(wd * t) + B * math.sin(wd * t))
            + wd * (-x1 * math.sin(wd * t) + B * math.cos(wd * t))
        )

    def g(t):
        return c * x(t) + d * w(t)

    grid = np.linspace(0.0, 2 * math.pi / wd, 20001)[1:]
    k = next(i for i in range(len(grid) - 1) if g(grid[i]) < 0.0 <= g(grid[i + 1]))
    t2 = brentq(g, grid[k], grid[k + 1], xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=200)
    x2, w2 = x(t2), w(t2)
    assert x2 < 0.0 < w2
    t_deepest = brentq(w, 0.0, t2, xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=200)
    return w2 / v0, t1 + t2 + (-x2) / w2, -x(t_deepest)


def test_elastogap_law_gives_the_analytic_restitution_of_the_bounded_damper():
    """MSL 4.1 ElastoGap, n = 1 (f = f_c + f_d, f_d = d*v_rel bounded to [f_c, -f_c]): the
    monolithic impact (1 kg, c = 1e5 N/m, d = 20 N.s/m, 1 m/s; scipy DOP853, rtol 1e-12) against
    the piecewise closed form above (e = 0.9090084469...). The plain spring-damper would give
    exp(-pi*zeta/sqrt(1 - zeta^2)) = 0.9054: a law without the bound fails by 4e-3.
    Measured relative errors: restitution 1.3e-13 (tolerance 1.5e-12), contact time 6.3e-15
    (1e-13), penetration 1.4e-8 (1.5e-7; the reference samples x on 2001 points), dissipation
    (integral of lossPower = f_d*v_rel against (1 - e^2)*m*v0^2/2) 1.0e-12 (1e-11)."""
    e, t_contact, depth = closed_form_elastogap_impact(1.0, 1e5, 20.0, 1.0)
    assert 0.909 < e < 0.9091  # the law's value, not the plain 0.9054
    ref = elastogap_impact(m=1.0, c=1e5, d=20.0, v0=1.0)
    assert ref["restitution"] == pytest.approx(e, rel=1.5e-12, abs=0)
    assert ref["contact_time"] == pytest.approx(t_contact, rel=1e-13, abs=0)
    assert ref["penetration"] == pytest.approx(depth, rel=1.5e-7, abs=0)
    assert ref["dissipated"] == pytest.approx(0.5 * (1.0 - e * e), rel=1e-11, abs=0)


def test_elastogap_unstretched_length_shifts_the_contact_only():
    """MSL ElastoGap s_rel0 (contact while s_rel < s_rel0): with s_rel0 = 2 mm, c = 1e4 N/m,
    d = 20 N.s/m, 0.5 kg at 2 m/s the impact is the closed form's for x = s_rel - s_rel0
    (e = 0.69026; plain spring-damper 0.6384). Measured relative errors: restitution 2.3e-12
    (tolerance 2.5e-11), contact time 1.2e-13 (1.5e-12), penetration 6.1e-9 (6e-8, sampled)."""
    e, t_contact, depth = closed_form_elastogap_impact(0.5, 1e4, 20.0, 2.0)
    ref = elastogap_impact(m=0.5, c=1e4, d=20.0, v0=2.0, s_rel0=2e-3)
    assert ref["restitution"] == pytest.approx(e, rel=2.5e-11, abs=0)
    assert ref["contact_time"] == pytest.approx(t_contact, rel=1.5e-12, abs=0)
    assert ref["penetration"] == pytest.approx(depth, rel=6e-8, abs=0)


def test_elastogap_exponent_n_gives_the_hertz_contact_time():
    """MSL ElastoGap with n = 1.5 and d = 0 is Hertzian contact f_c = -c*|x|^1.5, elastic:
    restitution 1, largest compression delta = (5*m*v^2/(4*c))^0.4 (energy m*v^2/2 =
    c*delta^2.5/2.5), contact time T = 2*delta/v * int_0^1 du/sqrt(1 - u^2.5)
    = 2*delta/v * B(0.4, 0.5)/2.5 (Beta function) = 5.100 ms for 1 kg at 1 m/s, c = 1e7; with n = 1
    it would be pi*sqrt(m/c) = 0.99 ms. Measured relative errors: restitution 3.6e-11 (tolerance
    4e-10), T 5.8e-12 (6e-11), delta 2.3e-11 (2.5e-10)."""
    m, c, v = 1.0, 1e7, 1.0
    delta = (5.0 * m * v * v / (4.0 * c)) ** 0.4
    T = 2.0 * delta / v * beta(0.4, 0.5) / 2.5
    ref = elastogap_impact(m=m, c=c, d=0.0, v0=v, n=1.5)
    assert ref["restitution"] == pytest.approx(1.0, rel=4e-10, abs=0)
    assert ref["contact_time"] == pytest.approx(T, rel=6e-11, abs=0)
    assert ref["penetration"] == pytest.approx(delta, rel=2.5e-10, abs=0)


def test_hardstop_force_is_the_documented_law_on_the_analytic_contact():
    """MapleSim Translational Hardstop (b = 1 m, c = 1e5 N/m, d = 20 N.s/m): the force column F of
    hardstop_mass is F = c*(s_rel - b/2) + d*v_rel in the upper stop (unbounded damper: it pulls
    at the end of the contact) and 0 in the gap. Against the analytic Kelvin-Voigt contact of
    1 kg hitting at 1 m/s from s = 0.49 m (hit at t = 10 ms, u = s - b/2 =
    exp(-a*t)*sin(wd*t)/wd, a = d/(2m), wd = sqrt(c/m - a^2)): measured |F - F_analytic|
    3.0e-9 N (of a 302 N peak), tolerance 3e-8 N; in the gap exactly 0."""
    m, c, d, b = 1.0, 1e5, 20.0, 1.0
    t = np.linspace(0.0, 0.03, 3001)
    ref = hardstop_mass(t, b=b, c=c, d=d, m=m, s0=0.49, v0=1.0)
    alpha = d / (2 * m)
    wd = math.sqrt(c / m - alpha**2)
    tau = t - (0.5 * b - 0.49) / 1.0
    u = np.exp(-alpha * tau) * np.sin(wd * tau) / wd
    w = np.exp(-alpha * tau) * (np.cos(wd * tau) - alpha / wd * np.sin(wd * tau))
    expected = c * u + d * w
    inner = (tau > 1e-6) & (tau < math.pi / wd - 1e-6)
    assert inner.sum() > 900
    assert np.max(np.abs(ref["F"][inner] - expected[inner])) < 3e-8
    assert ref["F"][inner].min() < 0.0 < ref["F"][inner].max()  # the damper pulls near the end
    gap = (tau < -1e-6) | (tau > math.pi / wd + 1e-6)
    assert np.all(ref["F"][gap] == 0.0)


@pytest.mark.parametrize(
    "path",
    sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))
    + sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py")),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_examples_and_benchmarks_take_their_references_from_outside_the_fmus_code(path):
    """The examples' and benchmarks' references (monolithic curves, analytic values) do not
    come from the code the FMUs run: no import of contactfmu.components, contactfmu.mechanics or contactfmu.fmi."""
    assert forbidden_imports(path.read_text()) == []
