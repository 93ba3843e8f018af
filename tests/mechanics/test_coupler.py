"""The coupling of a contact law to the bodies of a co-simulation,
src/contactfmu/mechanics/coupler.py: reduced_mass, stiffness_number, planning_step, held_motion,
couple (the force of a step), advance_shadow (the law's own motion carried across steps) and the
Coupler (planning of the step, commit, the shadow across steps), against their documented rules
(docstrings), laws given by their motion, and closed forms of a body on a Hardstop (elastic
bounce, static deflection, plastic stiff stop). No FMU is built.
"""

import math

import pytest

from contactfmu.components.EndStop import law as endstop
from contactfmu.components.EndStop import prediction as endstop_prediction
from contactfmu.components.TranslationalHardstop import law as hardstop
from contactfmu.mechanics import coupler as coupling

# ---- couple and advance_shadow against their documented rules, with a law given by its motion ----


class Law:
    """predict(x0, w0, state0, times) of couple's docstring for a law whose motion is a uniform
    acceleration gl (the law's own acceleration), its first force at `onset` (None: never), its
    state passed on with a mark; records its calls."""

    def __init__(self, gl, onset, with_state=False):
        self.gl, self.onset, self.with_state, self.calls = gl, onset, with_state, []

    def __call__(self, x0, w0, state0, times):
        self.calls.append((x0, w0, state0, tuple(times)))
        states = []
        for t in times:
            x, w = x0 + w0 * t + 0.5 * self.gl * t * t, w0 + self.gl * t
            states.append((x, w, (state0, t)) if self.with_state else (x, w))
        return states, self.onset, 0


def test_couple_transmits_nothing_without_a_force_within_one_and_a_half_steps():
    """couple docstring: no shadow and no force within 1.5 steps: F = 0, no shadow."""
    h = 1e-3
    for onset in (None, 1.6e-3, 2e-3):
        law = Law(-50.0, onset)
        assert coupling.couple(0.01, 1.0, 2.0, 3.0, h, None, law, False, state="s") == (0.0, None)
        assert law.calls == [(0.01, 1.0, "s", (h, 2 * h))]


@pytest.mark.parametrize("onset", [1.4e-3, 1e-3, 1e-5])
@pytest.mark.parametrize("stiff", [False, True])
def test_couple_starts_the_shadow_and_brings_the_bodies_to_the_law_two_steps_ahead(onset, stiff):
    """couple docstring: a force within 1.5 steps starts the shadow (x, w, 0, state); about to hit:
    deadbeat to the law's state at 2h (x'' = g - F/mu, here F = mu*(g - gl))."""
    h, mu, g, gl = 1e-3, 2.0, 3.0, -50.0
    law = Law(gl, onset)
    f, shadow = coupling.couple(0.01, 1.0, mu, g, h, None, law, stiff, state="s")
    assert shadow == (0.01, 1.0, 0, "s")
    assert law.calls == [(0.01, 1.0, "s", (h, 2 * h))]
    assert f == pytest.approx(mu * (g - gl), rel=1e-9)


def shadow_rules(x, w, xs, ws, gl, h):
    """The two accelerations of couple's docstring for bodies at (x, w) and a shadow at (xs, ws)
    under the law's acceleration gl: deadbeat to the shadow's state at 2h, and the shadow's
    velocity at h."""
    x2, w2 = xs + 2 * h * ws + 2 * h * h * gl, ws + 2 * h * gl
    deadbeat = (x2 - x - 2 * h * w - 0.5 * h * h * (w2 - w) / h) / (1.5 * h * h - 0.5 * h * h)
    velocity = (ws + h * gl - w) / h
    return deadbeat, velocity


@pytest.mark.parametrize(
    "onset, stiff, rule",
    [
        (None, False, 1),
        (0.0, False, 1),
        (None, True, 0),
        (0.0, True, 0),
        (1e-4, False, 0),
        (2.5e-3, False, 0),
    ],
)
def test_couple_with_a_shadow_follows_its_rule(onset, stiff, rule):
    """couple docstring: with a shadow, the law runs from the shadow's state; free and about to hit
    (onset > 0) or stiff: deadbeat to the shadow's state at 2h; in contact (onset 0) or free without a
    force ahead: the shadow's velocity at h. The shadow is returned unchanged."""
    h, mu, g, gl = 1e-3, 2.0, 3.0, -50.0
    x, w, xs, ws = 0.0101, 0.98, 0.01, 1.0
    law = Law(gl, onset, with_state=True)
    shadow = coupling.Shadow(xs, ws, 1, "st")
    f, s = coupling.couple(x, w, mu, g, h, shadow, law, stiff, state="ignored")
    assert s == shadow
    assert law.calls == [(xs, ws, "st", (h, 2 * h))]
    a = shadow_rules(x, w, xs, ws, gl, h)[rule]
    assert f == pytest.approx(mu * (g - a), rel=1e-9)


@pytest.mark.parametrize("stiff", [False, True])
@pytest.mark.parametrize(
    "x, w, g, h",
    [
        (0.0123456, 0.987654, 3.3, 1e-3),
        (-0.031, -0.77, -9.81, 1e-2),
        (0.05, 1e-3, 0.0, 1e-4),
        (0.0, 0.0, 1e3, 1e-3),
        (12.345, -3.21, 0.5, 0.1),
        (1e-7, 2.5, 7.0, 1e-5),
    ],
)
def test_couple_free_shadow_transmits_exactly_nothing(x, w, g, h, stiff):
    """couple docstring: bodies on a free shadow (the law's motion is the free motion under g): F is
    exactly 0, not a rounding residue, under any held acceleration; 1e-7 m/s off the shadow: the
    correcting force (velocity: mu dv/h; deadbeat: mu*1.5 dv/h)."""
    mu = 0.7
    law = Law(g, None)
    assert coupling.couple(x, w, mu, g, h, coupling.Shadow(x, w, 1, None), law, stiff) == (
        0.0,
        (x, w, 1, None),
    )
    dv = 1e-7
    f, _ = coupling.couple(x, w + dv, mu, g, h, coupling.Shadow(x, w, 1, None), law, stiff)
    assert f == pytest.approx(mu * dv / h * (1.5 if stiff else 1.0), rel=1e-6)


def test_advance_shadow_counts_free_steps_and_lets_go_after_two():
    """advance_shadow docstring: the shadow one step later with its free-step count (0 when the law
    transmits), None once free for two steps; the law's state carried on; None stays None."""
    h = 1e-3
    law = Law(-2.0, None, with_state=True)
    shadow, pred = coupling.advance_shadow(coupling.Shadow(0.5, 1.0, 0, "st"), h, law)
    assert law.calls == [(0.5, 1.0, "st", (h,))]
    assert shadow == (pytest.approx(0.5 + h - h * h), pytest.approx(1.0 - 2 * h), 1, ("st", h))
    assert pred == coupling.Prediction(*law(0.5, 1.0, "st", (h,)))
    assert pred.states == law(0.5, 1.0, "st", (h,))[0] and pred.detail is None
    let_go = coupling.advance_shadow(coupling.Shadow(0.5, 1.0, 1, "st"), h, law)
    assert let_go == (None, coupling.Prediction(*law(0.5, 1.0, "st", (h,))))
    law = Law(-2.0, 0.0)
    shadow, _ = coupling.advance_shadow(coupling.Shadow(0.5, 1.0, 1, "st"), h, law)
    assert shadow == (pytest.approx(0.5 + h - h * h), pytest.approx(1.0 - 2 * h), 0, None)
    shadow, _ = coupling.advance_shadow(coupling.Shadow(0.5, 1.0, 5, None), h, Law(-2.0, 0.5 * h))
    assert shadow.free_steps == 0
    assert coupling.advance_shadow(None, h, law) == (None, None)


# ---- Coupler: the planning of the step and the shadow across steps -------------------------------


class CouplerLaw:
    """predict(x, w, g, state, times) of Coupler's docstring: the law's motion under g with its own
    extra acceleration ga, first force at `onset`; records its calls."""

    def __init__(self, ga, onset):
        self.ga, self.onset, self.calls = ga, onset, []

    def __call__(self, x0, w0, g, state, times):
        self.calls.append((x0, w0, g, state, tuple(times)))
        a = g + self.ga
        return [(x0 + w0 * t + 0.5 * a * t * t, w0 + a * t) for t in times], self.onset, 0


def test_coupler_plans_with_the_default_step_and_then_the_last_one():
    """Coupler/planning_step docstrings: before any step, default_h and g = 0; after a step of h,
    that h and g = (v - last_v)/h + last_F/mu (the mean acceleration without this element's force)."""
    mu, dh = 2.0, 1e-3
    coupler = coupling.Coupler(mu, dh)
    law = CouplerLaw(0.0, None)
    steps = []
    f = coupler.force(0.1, 1.0, law, lambda h: steps.append(h) or False)
    assert f == 0.0 and steps == [dh]
    assert law.calls[0] == (0.1, 1.0, 0.0, None, (dh, 2 * dh))
    coupler.commit(2e-3, law)  # no force, no contact within the step taken
    assert law.calls[-1] == (0.1, 1.0, 0.0, None, (2e-3,))
    law.calls.clear()
    f = coupler.force(0.102, 1.5, law, lambda h: steps.append(h) or False)
    g = (1.5 - 1.0) / 2e-3
    assert steps[-1] == 2e-3
    assert law.calls == [(0.102, 1.5, pytest.approx(g, rel=1e-12), None, (2e-3, 4e-3))]


def test_coupler_starts_a_shadow_and_carries_it_across_steps():
    """Coupler docstring: a law with a force ahead starts the shadow at the bodies' motion; the next
    step advances the shadow by the step taken (advance_shadow) and couples to it; the held force
    enters the next step's g (x'' = g - F/mu)."""
    mu, h = 2.0, 1e-3
    coupler = coupling.Coupler(mu, h)
    law = CouplerLaw(-40.0, 0.5e-3)
    f1 = coupler.force(0.1, 1.0, law, lambda step: False)
    assert f1 == pytest.approx(mu * 40.0, rel=1e-9)  # deadbeat onto the law: F = -mu*ga
    coupler.commit(h, law)
    law.calls.clear()
    # the bodies moved with the force held: x'' = 0 - F/mu = -40 (g = 0 in the first step)
    x1, v1 = 0.1 + 1.0 * h - 0.5 * 40.0 * h * h, 1.0 - 40.0 * h
    f2 = coupler.force(x1, v1, law, lambda step: False)
    g = (v1 - 1.0) / h + f1 / mu  # = 0 to rounding
    assert law.calls[0][0:2] == (0.1, 1.0) and law.calls[0][4] == (h,)  # the shadow advanced by h
    assert law.calls[0][2] == pytest.approx(g, abs=1e-9)
    xs, ws = law.calls[1][0:2]
    assert (xs, ws) == (pytest.approx(x1, rel=1e-12), pytest.approx(v1, rel=1e-12))
    assert law.calls[1][4] == (h, 2 * h)
    assert f2 == pytest.approx(mu * 40.0, rel=1e-6)


def test_coupler_commit_starts_the_shadow_of_a_contact_within_a_longer_step():
    """Coupler.commit docstring: a step longer than planned that holds a contact the plan did not see
    (no force, no shadow) starts the shadow at the step's start; a contact beyond the step does not."""
    mu, dh = 1.0, 1e-3
    for onset, started in [(5e-3, True), (1e-2, True), (1.5e-2, False), (None, False)]:
        coupler = coupling.Coupler(mu, dh)
        law = CouplerLaw(-40.0, onset)
        f = coupler.force(0.2, -1.0, law, lambda step: False)
        assert f == 0.0  # no force within 1.5 planned steps
        coupler.commit(1e-2, law)
        assert law.calls[-1] == (0.2, -1.0, 0.0, None, (1e-2,))
        law.calls.clear()
        coupler.force(0.19, -1.0, law, lambda step: False)
        if started:  # the shadow (0.2, -1.0) advanced over the step taken (1e-2)
            assert law.calls[0][:2] == (0.2, -1.0) and law.calls[0][4] == (1e-2,)
        else:
            assert law.calls[0][:2] == (0.19, -1.0) and law.calls[0][4] == (1e-2, 2e-2)


@pytest.mark.parametrize("stiff", [False, True])
def test_couple_transmits_a_small_force_well_above_the_rounding(stiff):
    """couple docstring: only a force within the rounding of the velocity arithmetic is 0: bodies
    1e-12 m/s off a free shadow moving at 1e-6 m/s (a relative 1e-6, far above rounding) get the
    correcting force (velocity: mu dv/h; deadbeat: mu*1.5 dv/h)."""
    mu, h, dv = 0.7, 1e-3, 1e-12
    for x, w in [(0.0, 1e-6), (1e-9, -1e-6), (0.0, 0.0)]:
        f, _ = coupling.couple(
            x, w + dv, mu, 0.0, h, coupling.Shadow(x, w, 1, None), Law(0.0, None), stiff
        )
        assert f == pytest.approx(mu * dv / h * (1.5 if stiff else 1.0), rel=1e-3)


def test_couple_free_shadow_gives_exactly_zero_with_a_large_rounding_residue():
    """couple docstring: bodies on a free shadow: F exactly 0 (a case whose deadbeat arithmetic
    leaves a residue of several ulps)."""
    x, w, g, h = (
        3.23014203478782e-07,
        0.001136810341674952,
        -0.03880187387735145,
        0.015308319244762149,
    )
    for stiff in (False, True):
        assert (
            coupling.couple(x, w, 0.7, g, h, coupling.Shadow(x, w, 1, None), Law(g, None), stiff)[0]
            == 0.0
        )


class ScriptedLaw:
    """predict(x, w, g, state, times) of Coupler's docstring: free motion under g, the law's state
    after call n is ("m", n), the onsets given in order (then None); records its calls."""

    def __init__(self, onsets):
        self.onsets, self.calls = list(onsets), []

    def __call__(self, x0, w0, g, state, times):
        n = len(self.calls)
        self.calls.append((x0, w0, g, state, tuple(times)))
        onset = self.onsets.pop(0) if self.onsets else None
        return [(x0 + w0 * t + 0.5 * g * t * t, w0 + g * t, ("m", n)) for t in times], onset, 0


def test_coupler_shadow_started_at_commit_carries_the_law_state():
    """Coupler docstrings: a contact seen only at commit starts the shadow (free count 0) at the
    step's start; the next force advances it by the step (advance_shadow: one free step, kept) and
    couples to it, the law's state carried on; the bodies' own (different) position is not used."""
    h = 1e-3
    law = ScriptedLaw([None, 0.5 * h])
    coupler = coupling.Coupler(1.0, h)
    assert coupler.force(0.1, 1.0, law, lambda step: False) == 0.0
    coupler.commit(h, law)  # onset 0.5 h within the step: shadow
    coupler.force(0.1012, 1.0, law, lambda step: False)
    assert law.calls[2] == (0.1, 1.0, 0.0, None, (h,))  # the shadow advanced by h
    assert law.calls[3] == (0.1 + 1.0 * h + 0.0, 1.0, 0.0, ("m", 2), (h, 2 * h))


def test_coupler_keeps_a_free_shadow_across_commit():
    """Coupler docstrings: a shadow with no force held is kept by commit (its state and free count):
    after two free steps it is let go (advance_shadow), the law's state carried until then."""
    h = 1e-3
    law = ScriptedLaw([None, 0.5 * h, None, None, 0.5 * h])
    coupler = coupling.Coupler(1.0, h)
    coupler.force(0.1, 1.0, law, lambda step: False)
    coupler.commit(h, law)
    x1 = 0.1 + 1.0 * h + 0.0  # the bodies on the shadow
    assert coupler.force(x1, 1.0, law, lambda step: False) == 0.0
    n = len(law.calls)
    coupler.commit(h, law)  # a shadow: no new onset check
    assert len(law.calls) == n
    coupler.force(x1 + 1.0 * h + 0.0, 1.0, law, lambda step: False)
    assert law.calls[n][3] == ("m", 2) and law.calls[n][4] == (h,)


def test_couple_free_and_contact():
    """A motion that stays free transmits nothing; one that hits within the step gets the force
    that brings the bodies to the law's state two steps ahead."""

    def predict(x, w, state, times):
        return hardstop.predict(x, w, 1.0, 0.0, times, 0.2, 1e4, 10.0)

    f, shadow = coupling.couple(0.0, 0.5, 1.0, 0.0, 1e-3, None, predict, False)
    assert (f, shadow) == (0.0, None)
    x, w, h = 0.0995, 1.0, 1e-3
    f, shadow = coupling.couple(x, w, 1.0, 0.0, h, None, predict, False)
    assert shadow == (x, w, 0, None)
    (x1, w1), (x2, w2) = predict(x, w, None, (h, 2 * h))[0]
    a = (x2 - x - 1.5 * h * w - 0.5 * h * w2) / (h * h)
    assert f == pytest.approx(-a, rel=1e-9)
    shadow2, pred = coupling.advance_shadow(shadow, h, predict)
    assert shadow2[:2] == pytest.approx(predict(x, w, None, (h,))[0][0])
    assert coupling.advance_shadow(None, h, predict) == (None, None)


# ---- the Coupler in a co-simulation -----------------------------------------------------------


def cosimulate(x0, v0, b, c, d, force, h, n, default_h=None, mu=1.0):
    """A body (mass mu) on a Hardstop at a fixed frame, driven by a constant force, each step with
    the force the Coupler holds (integrated exactly: constant acceleration)."""
    coupler = coupling.Coupler(mu, default_h or h)

    def predict(x, w, g, state, times):
        return hardstop.predict(x, w, mu, g, times, b, c, d)

    def stiff(step):
        return coupling.stiffness_number(mu, step, c, d) > 1.0

    x, v, out = x0, v0, []
    for _ in range(n):
        f = coupler.force(x, v, predict, stiff)
        a = (force - f) / mu
        x, v = x + v * h + 0.5 * a * h * h, v + a * h
        coupler.commit(h, predict)
        out.append((x, v, f))
    return out


@pytest.mark.parametrize("default_h", [None, 1e-3])
@pytest.mark.parametrize("x0", [0.095, 0.099])
def test_coupler_elastic_bounce_returns_the_speed(default_h, x0):
    """An undamped spring stop (c = 1e4 N/m, 1 kg: contact time pi/100 s, resolved by 10 ms steps):
    the body leaves with the speed it came with, and the element transmits nothing in free flight;
    also when the first step is 10 times longer than the one planned (default_h)."""
    b, c, h = 0.2, 1e4, 1e-2
    out = cosimulate(x0, 1.0, b, c, 0.0, 0.0, h, 12, default_h)
    assert out[-1][1] == pytest.approx(-1.0, rel=1e-9)
    assert out[-1][2] == 0.0
    # free flight after the release: x = 0.1 - (t - t_release), t_release = hit + pi/100
    t = 12 * h
    t_release = (0.1 - x0) / 1.0 + math.pi / 100.0
    assert out[-1][0] == pytest.approx(0.1 - (t - t_release), abs=h)
    # the total impulse of the element is the momentum change 2*mu*v
    assert sum(f for _, _, f in out) * h == pytest.approx(2.0, rel=1e-9)


def test_coupler_holds_a_pushed_body_at_the_static_deflection():
    """A constant force of 10 N pushes the body into a damped stop: the held force becomes 10 N at
    the static deflection F/c past the stop."""
    b, c, d, h = 0.2, 1e4, 100.0, 1e-3
    out = cosimulate(0.1, 0.0, b, c, d, 10.0, h, 3000)
    x, v, f = out[-1]
    assert f == pytest.approx(10.0, rel=1e-6)
    assert x == pytest.approx(0.1 + 10.0 / c, abs=1e-6)
    assert v == pytest.approx(0.0, abs=1e-9)


def test_coupler_stiff_stop_is_plastic():
    """The documented defaults c = d = 1e10 against 1 kg: an overdamped stop the step cannot
    resolve (stiff): the body stops at the stop without rebound or penetration."""
    b, c, d, h = 0.2, 1e10, 1e10, 1e-3
    out = cosimulate(0.09, 1.0, b, c, d, 0.0, h, 40)
    x, v, f = out[-1]
    assert v == pytest.approx(0.0, abs=1e-6)
    assert x == pytest.approx(0.1, abs=1e-6)
    assert max(x for x, _, _ in out) <= 0.1 + 1e-6
    assert sum(f for _, _, f in out) * h == pytest.approx(1.0, rel=1e-6)


# ---- couple and advance_shadow against the documented rules -----------------------------------


def hardstop_predictor(b=0.2, c=1e4, d=10.0, mu=1.0):
    def predict(x, w, state, times):
        return hardstop.predict(x, w, mu, 0.0, times, b, c, d)

    return predict


def endstop_law(p, mu, g):
    """The EndStop FMU's wrapper: the law's discrete state (stop, sf) rides along."""

    def predict(x, w, state, times):
        pred = endstop_prediction.predict(x, w, state[0], state[1], mu, g, times, p)
        return (
            [(xs, ws, (st, sf)) for xs, ws, st, sf in pred.states],
            pred.onset,
            pred.changes,
            pred,
        )

    return predict


def test_advance_shadow_with_the_hardstop_and_endstop_laws():
    h, predict = 1e-3, hardstop_predictor()
    # free (far from both stops at x = +-0.1): the free count grows; after two free steps no shadow
    shadow, pred = coupling.advance_shadow(coupling.Shadow(0.0, 1.0, 0, None), h, predict)
    assert shadow == (pytest.approx(h), 1.0, 1, None) and pred[1] is None
    assert coupling.advance_shadow(coupling.Shadow(0.0, 1.0, 1, None), h, predict)[0] is None
    # in contact (x beyond 0.1, moving in): the count restarts at 0
    shadow, pred = coupling.advance_shadow(coupling.Shadow(0.105, 1.0, 1, None), h, predict)
    assert shadow[2] == 0 and pred[1] == 0.0
    assert shadow[1] < 1.0  # decelerated by the stop
    # the law's discrete state is passed in and carried on: a rigid stop holding the body
    p = endstop.Parameters(mode=endstop.RIGID, l1=0.0, l2=1.0)
    shadow, pred = coupling.advance_shadow(
        coupling.Shadow(0.0, 0.0, 1, (endstop.STOP1, 0)), h, endstop_law(p, 2.0, 3.0)
    )
    assert shadow == (0.0, 0.0, 0, (endstop.STOP1, 0))


def test_couple_starts_the_shadow_only_for_a_force_within_one_and_a_half_steps():
    h, predict = 1e-3, hardstop_predictor()
    # hits at 1.8 h (after 2 h in the stop): no force yet, no shadow
    assert coupling.couple(0.1 - 1.8e-3, 1.0, 1.0, 0.0, h, None, predict, False) == (0.0, None)
    # hits at 1.2 h: the shadow starts, F from the law's state two steps ahead (deadbeat)
    x, w = 0.1 - 1.2e-3, 1.0
    f, shadow = coupling.couple(x, w, 1.0, 0.0, h, None, predict, False)
    assert shadow == (x, w, 0, None)
    (_, _), (x2, w2) = predict(x, w, None, (h, 2 * h))[0]
    assert f == pytest.approx(-(x2 - x - 1.5 * h * w - 0.5 * h * w2) / h**2, rel=1e-9)


def test_couple_with_a_shadow_in_contact_matches_the_velocity_and_about_to_hit_the_state():
    h, mu, predict = 1e-3, 2.0, hardstop_predictor(mu=2.0)
    # the shadow is in contact from the start (onset 0): F gives the bodies the shadow's velocity
    # after one step (impulse-consistent), whatever the bodies' own (slightly different) state
    shadow = coupling.Shadow(0.103, -0.4, 0, None)
    (x1, w1), _ = predict(0.103, -0.4, None, (h, 2 * h))[0]
    f, s = coupling.couple(0.1031, -0.41, mu, 0.0, h, shadow, predict, False)
    assert s == shadow
    assert f == pytest.approx(mu * (0.0 - (w1 - -0.41) / h), rel=1e-9)
    # the shadow is free and hits within the two steps: deadbeat to its state at 2 h
    shadow = coupling.Shadow(0.0995, 1.0, 1, None)
    _, (x2, w2) = predict(0.0995, 1.0, None, (h, 2 * h))[0]
    x, w = 0.0996, 0.98
    f, _ = coupling.couple(x, w, mu, 0.0, h, shadow, predict, False)
    assert f == pytest.approx(-mu * (x2 - x - 1.5 * h * w - 0.5 * h * w2) / h**2, rel=1e-9)
    # the EndStop's state: a rigid stop at stop 1 holding the body against g > 0 transmits mu*g
    p = endstop.Parameters(mode=endstop.RIGID, l1=0.0, l2=1.0)
    f, s = coupling.couple(
        0.0,
        0.0,
        mu,
        3.0,
        h,
        coupling.Shadow(0.0, 0.0, 0, (endstop.STOP1, 0)),
        endstop_law(p, mu, 3.0),
        True,
    )
    assert f == pytest.approx(mu * 3.0, rel=1e-12)


@pytest.mark.parametrize("stiff", [False, True])
def test_couple_free_hardstop_shadow_transmits_exactly_nothing(stiff):
    """A shadow that stays free over both steps, bodies on it: the force is exactly 0 (not a
    rounding residue), under any held acceleration."""
    h, mu, g = 1e-3, 0.7, 3.3
    b = 0.2

    def predict(x, w, state, times):
        return hardstop.predict(x, w, mu, g, times, b, 1e4, 10.0)

    for x, w in [(0.0123456, 0.987654), (-0.031, -0.77), (0.05, 1e-3), (0.0, 0.0)]:
        f, s = coupling.couple(x, w, mu, g, h, coupling.Shadow(x, w, 1, None), predict, stiff)
        assert f == 0.0
    # a bodies' motion off the shadow's by 1e-9 m/s gets the force that corrects it
    x, w = 0.0123456, 0.987654
    f, _ = coupling.couple(x, w + 1e-9, mu, g, h, coupling.Shadow(x, w, 1, None), predict, stiff)
    # (velocity matching: mu*dv/h; deadbeat: the extra 1.5*h*dv of travel to take back over h^2)
    assert f == pytest.approx(mu * 1e-9 / h * (1.5 if stiff else 1.0), rel=1e-4)


# ---- Coupler in any master (motion, commit of the delivered force) -------------------------------


class Recorder:
    """predict(x, w, g, state, times) of the Coupler docstring: a uniform acceleration gl of the law,
    the first force at `onset`, the state passed on; records the calls."""

    def __init__(self, gl, onset):
        self.gl, self.onset, self.calls = gl, onset, []

    def __call__(self, x0, w0, g, state, times):
        self.calls.append((x0, w0, g, state, tuple(times)))
        return (
            [(x0 + w0 * t + 0.5 * self.gl * t * t, w0 + self.gl * t, state) for t in times],
            self.onset,
            0,
        )


def test_coupler_force_passes_the_shadow_state_to_the_law():
    """couple/advance_shadow docstrings: the law is predicted from the shadow's own discrete state."""
    c = coupling.Coupler(1.0, 1e-3)
    c.shadow = coupling.Shadow(0.0, 1.0, 0, "held")
    law = Recorder(0.0, 0.0)
    c.force(0.0, 1.0, law, lambda h: False)
    assert law.calls and all(call[3] == "held" for call in law.calls)


def test_coupler_commit_starts_a_shadow_only_without_one():
    """commit docstring: a step longer than planned that holds a contact starts the shadow at the
    step's start (as couple does: (x, w, 0 free steps, state)); an existing shadow is kept."""
    c = coupling.Coupler(1.0, 1e-3)
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = 0.0, 0.2, -1.0, 0.5, None
    c.commit(0.01, Recorder(0.0, 0.004))
    assert c.shadow == coupling.Shadow(0.2, -1.0, 0, None)
    assert (c.last_h, c.last_v, c.last_f) == (0.01, -1.0, 0.0)
    c = coupling.Coupler(1.0, 1e-3)
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = (
        0.0,
        0.2,
        -1.0,
        0.5,
        coupling.Shadow(0.3, -0.5, 1, "state"),
    )
    law = Recorder(0.0, 0.0)
    c.commit(0.01, law)
    assert c.shadow == coupling.Shadow(0.3, -0.5, 1, "state")


def test_coupler_motion_uses_the_inputs_when_they_are_fresh_or_there_is_no_model_yet():
    """Coupler docstring: the inputs if they were set since the last step, else the element's model
    of the bodies at the end of the last step (none before the first step: the inputs)."""
    c = coupling.Coupler(2.0, 1e-3)
    assert c.motion(0.1, -1.0, False) == (0.1, -1.0)  # no model yet
    c.expected = (0.3, 0.5)
    assert c.motion(0.1, -1.0, True) == (0.1, -1.0)  # fresh inputs (Gauss-Seidel)
    assert c.motion(0.1, -1.0, False) == (0.3, 0.5)  # one step old (Jacobi): the model


def test_coupler_commit_models_the_bodies_with_the_delivered_force():
    """commit: the bodies' motion at the step's end under g - delivered/mu held over h, g from
    planning_step (the last step's velocity change plus its force's share); the delivered force and
    the start velocity become the next step's last_f and last_v."""
    mu, h = 2.0, 0.5
    c = coupling.Coupler(mu, 1e-3)
    c.last_h, c.last_v, c.last_f = 0.25, 1.0, 3.0
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = (
        7.0,
        9.0,
        9.0,
        9.0,
        coupling.Shadow(1.0, 2.0, 0, None),
    )
    c.commit(h, Recorder(0.0, None), x=0.5, w=2.0, delivered=4.0)
    g = (2.0 - 1.0) / 0.25 + 3.0 / mu  # 5.5
    a = g - 4.0 / mu  # 3.5
    assert c.expected == (0.5 + h * 2.0 + 0.5 * a * h * h, 2.0 + a * h)
    assert (c.last_h, c.last_v, c.last_f) == (h, 2.0, 4.0)
    assert c.shadow == coupling.Shadow(1.0, 2.0, 0, None)


def test_coupler_commit_defaults_to_the_force_and_motion_last_computed():
    """Without x, w, delivered (a master that sets inputs and reads the force before every step):
    the motion and force of the last force() call."""
    c = coupling.Coupler(1.0, 1e-3)
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = 2.0, 0.25, -1.0, 0.0, [0.0, 0.0, 0, None]
    c.commit(0.5, Recorder(0.0, None))
    assert (c.last_v, c.last_f) == (-1.0, 2.0)
    assert c.expected == coupling.held_motion(0.25, -1.0, 0.0 - 2.0, 0.5)


def test_coupler_commit_with_no_step_before_plans_without_other_forces():
    """First step (last_h = 0): planning_step gives g = 0, so the model moves under -delivered/mu only."""
    c = coupling.Coupler(4.0, 1e-3)
    c.force_now, c.x_now, c.v_now, c.g_now, c.pending = 1.0, 0.0, 0.0, 0.0, [0.0, 0.0, 0, None]
    c.commit(0.5, Recorder(0.0, None), x=1.0, w=-2.0, delivered=8.0)
    assert c.expected == coupling.held_motion(1.0, -2.0, -2.0, 0.5)


# ---- couple: a free law motion -------------------------------------------------------------------


def test_couple_free_motion_holds_exactly_zero():
    """coupling.couple: a free law motion (no force within the step) gives exactly 0, not the
    rounding of (w1 - w)/h (ElastoGap held f = +1.74e-13 N, a pull, on 4 steps)."""
    from contactfmu.components.ElastoGap import law as elastogap
    from contactfmu.mechanics.coupler import Shadow, couple

    mu, h = 0.5, 1e-4
    for w in (0.3, -0.7, 1.234567, 1e-3):
        for g in (0.0, 9.81, -3.3):

            def predict(x0, w0, state, times):
                return elastogap.predict(x0, w0, mu, g, times, 1.0, 1.0)

            force, shadow = couple(0.5, w, mu, g, h, Shadow(0.5, w, 0, None), predict, False)
            assert force == 0.0, (w, g, force)


# ---- the small helpers and held_motion --------------------------------------------------------


# ---- small helpers -------------------------------------------------------------------------------


def test_reduced_mass():
    """reduced_mass docstring: m_a m_b/(m_a + m_b); 0 is a fixed body; None if both are fixed."""
    assert coupling.reduced_mass(2.0, 3.0) == pytest.approx(1.2, rel=1e-15)
    assert coupling.reduced_mass(0.0, 3.0) == pytest.approx(3.0, rel=1e-15)
    assert coupling.reduced_mass(2.0, 0.0) == pytest.approx(2.0, rel=1e-15)
    assert coupling.reduced_mass(0.0, 0.0) is None
    assert coupling.reduced_mass(0.5, 0.5) == pytest.approx(0.25, rel=1e-15)
    assert coupling.reduced_mass(1e-3, 0.0) == pytest.approx(1e-3, rel=1e-15)
    assert coupling.reduced_mass(0.0, 1e-3) == pytest.approx(1e-3, rel=1e-15)
    assert coupling.reduced_mass(-1.0, -2.0) is None  # no positive mass: both fixed


def test_stiffness_number():
    """stiffness_number docstring: h times the fastest rate max(d/mu, sqrt(c/mu))."""
    assert coupling.stiffness_number(2.0, 0.1, 800.0, 30.0) == pytest.approx(0.1 * 20.0, rel=1e-15)
    assert coupling.stiffness_number(2.0, 0.1, 800.0, 50.0) == pytest.approx(0.1 * 25.0, rel=1e-15)
    assert coupling.stiffness_number(4.0, 0.5, 4.0, 1.0) == pytest.approx(0.5 * 1.0, rel=1e-15)


def test_planning_step():
    """planning_step docstring: (last_h, (v - last_v)/last_h + last_F/mu), or (default_h, 0) before any step."""
    assert coupling.planning_step(3.0, 1.0, 4.0, 2.0, 0.5, 0.1) == pytest.approx(
        (0.5, 2.0 / 0.5 + 2.0), rel=1e-15
    )
    assert coupling.planning_step(3.0, 1.0, 4.0, 2.0, 0.0, 0.1) == (0.1, 0.0)
    assert coupling.planning_step(3.0, 1.0, 4.0, 2.0, -1.0, 0.1) == (0.1, 0.0)


def test_deadbeat_acceleration():
    """deadbeat_acceleration docstring: a1 over [0, h], then a2 over [h, 2h], reach (x2, w2) at 2h."""
    x0, w0, x2, w2, h = 0.2, -1.0, 0.05, 0.4, 0.01
    a1 = coupling.deadbeat_acceleration(x0, w0, x2, w2, h)
    a2 = (w2 - w0) / h - a1
    assert x0 + 2 * h * w0 + 1.5 * h * h * a1 + 0.5 * h * h * a2 == pytest.approx(x2, rel=1e-12)
    assert coupling.deadbeat_acceleration(1.0, 0.0, 1.0, 0.0, 0.5) == 0.0
    assert coupling.deadbeat_acceleration(0.0, 0.0, 1.0, 0.0, 1.0) == pytest.approx(1.0)


def test_reduced_mass_stiffness_and_planning():
    assert coupling.reduced_mass(2.0, 3.0) == pytest.approx(6.0 / 5.0)
    assert coupling.reduced_mass(0.0, 3.0) == 3.0
    assert coupling.reduced_mass(2.0, 0.0) == 2.0
    assert coupling.reduced_mass(0.0, 0.0) is None
    assert coupling.stiffness_number(2.0, 0.1, 800.0, 30.0) == pytest.approx(0.1 * 20.0)
    assert coupling.stiffness_number(2.0, 0.1, 800.0, 50.0) == pytest.approx(0.1 * 25.0)
    assert coupling.planning_step(3.0, 1.0, 4.0, 2.0, 0.5, 0.1) == pytest.approx(
        (0.5, (3.0 - 1.0) / 0.5 + 4.0 / 2.0)
    )
    assert coupling.planning_step(3.0, 1.0, 4.0, 2.0, 0.0, 0.1) == (0.1, 0.0)


def test_deadbeat_acceleration_reaches_the_target_two_steps_ahead():
    x0, w0, x2, w2, h = 0.2, -1.0, 0.05, 0.4, 0.01
    a1 = coupling.deadbeat_acceleration(x0, w0, x2, w2, h)
    x1, w1 = x0 + w0 * h + 0.5 * a1 * h * h, w0 + a1 * h
    a2 = (w2 - w1) / h  # the acceleration that gives w2 at 2h
    assert x1 + w1 * h + 0.5 * a2 * h * h == pytest.approx(x2, rel=1e-9)


def test_reduced_mass_of_light_bodies():
    assert coupling.reduced_mass(0.5, 0.25) == pytest.approx(1.0 / 6.0)
    assert coupling.reduced_mass(0.5, 0.0) == 0.5 and coupling.reduced_mass(0.0, 0.25) == 0.25


# ---- held_motion --------------------------------------------------------------------------------


def test_held_motion_is_the_uniformly_accelerated_motion():
    """x + h*w + a*h^2/2, w + a*h: written out with values whose products are exact in binary."""
    assert coupling.held_motion(0.5, -2.0, 4.0, 0.25) == (0.5 - 0.5 + 0.125, -2.0 + 1.0)
    assert coupling.held_motion(1.0, 0.0, -8.0, 0.5) == (0.0, -4.0)
