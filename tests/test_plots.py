"""Guard of the examples' pictures: every figure an example's plot writes is checked with
matplotlib for legends on the data (the share of each plotted curve, densified along its
segments in display space, that a legend box covers), for legends on other text (titles, axis
and tick labels, other legends), for axes without a y label with a unit [...] (twin axes
included) or with x tick labels but no x label with a unit, and for text outside the figure
(clipped on saving).

The fast examples run in-process at their default step on freshly built FMUs (fmu_dir) with
--out in tmp_path; PreLoad (20 min as an FMU run) is plotted from the project's monolithic
solution of the full 100 s, which has the shape of the FMU result."""

import re
import runpy
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
MAX_COVERED = 0.01  # share of a curve a legend may cover
PIXELS = 2.0  # densification of the curves' segments in display space


@pytest.fixture
def figures(monkeypatch):
    """The figures saved while the test runs, as [(figure, path)]; the files are still written
    (the figure's dpi is set to the one it was saved with, so that problems() sees the PNG)."""
    from matplotlib.figure import Figure

    saved, original = [], Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        out = original(self, fname, *args, **kwargs)
        dpi = kwargs.get("dpi")
        if isinstance(dpi, (int, float)):
            self.set_dpi(dpi)
        saved.append((self, Path(fname)))
        return out

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


def _curves(ax):
    """Display coordinates (n x 2 arrays) of the data drawn in ax: lines (stepped as drawn,
    densified along the segments unless markers only) and line collections (vlines, ...)."""
    from matplotlib import cbook
    from matplotlib.collections import LineCollection

    for line in ax.get_lines():
        if not line.get_visible():
            continue
        x, y = (np.asarray(a, float) for a in line.get_data(orig=False))
        if len(x) == 0:
            continue
        if line.get_drawstyle() in cbook.STEP_LOOKUP_MAP and line.get_drawstyle() != "default":
            x, y = cbook.STEP_LOOKUP_MAP[line.get_drawstyle()](x, y)
        xy = line.get_transform().transform(np.column_stack([x, y]))
        connected = line.get_linestyle() not in ("None", "none", "", " ")
        yield line.get_label(), _densify(xy) if connected else xy
    for coll in ax.collections:
        if isinstance(coll, LineCollection) and coll.get_visible():
            for k, seg in enumerate(coll.get_segments()):
                if len(seg):
                    yield f"{coll.get_label()}[{k}]", _densify(coll.get_transform().transform(seg))


def _densify(xy):
    """Points along the polyline xy at most PIXELS apart (non-finite points break it)."""
    a, b = xy[:-1], xy[1:]
    ok = np.isfinite(a).all(axis=1) & np.isfinite(b).all(axis=1)
    a, b = a[ok], b[ok]
    n = np.maximum(1, np.ceil(np.hypot(*(b - a).T) / PIXELS).astype(int))
    if n.sum() > 2_000_000:  # pathological: keep the vertices only
        return xy[np.isfinite(xy).all(axis=1)]
    start = np.repeat(a, n, axis=0)
    step = np.repeat((b - a) / n[:, None], n, axis=0)
    k = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
    return (
        np.vstack([start + step * k[:, None], b[-1:]])
        if len(a)
        else xy[np.isfinite(xy).all(axis=1)]
    )


def _inside(points, box, margin=0.0):
    return (
        (points[:, 0] >= box.x0 - margin)
        & (points[:, 0] <= box.x1 + margin)
        & (points[:, 1] >= box.y0 - margin)
        & (points[:, 1] <= box.y1 + margin)
    )


def _overlap(a, b):
    return max(0.0, min(a.x1, b.x1) - max(a.x0, b.x0)) * max(0.0, min(a.y1, b.y1) - max(a.y0, b.y0))


def _tick_labels(ax):
    """The tick labels drawn (ticks inside the view interval)."""
    labels = []
    for axis in (ax.xaxis, ax.yaxis):
        lo, hi = sorted(axis.get_view_interval())
        eps = 1e-9 * max(abs(lo), abs(hi), 1e-300)
        for tick in axis.get_major_ticks() + axis.get_minor_ticks():
            if lo - eps <= tick.get_loc() <= hi + eps:
                labels += [tick.label1, tick.label2]
    return labels


def problems(fig):
    """What is wrong with the figure (empty if nothing)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)  # a closed figure has lost its pyplot canvas
    canvas.draw()
    renderer = canvas.get_renderer()
    found = []
    axes = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    legends = [
        (f"legend of axes {i}", ax.get_legend()) for i, ax in enumerate(fig.axes) if ax.get_legend()
    ]
    legends += [(f"figure legend {i}", leg) for i, leg in enumerate(fig.legends)]
    boxes = [(name, leg.get_window_extent(renderer)) for name, leg in legends if leg.get_visible()]
    texts = [fig._suptitle] if fig._suptitle is not None else []
    for i, ax in enumerate(axes):
        where = f"axes {i} ({ax.get_title() or ax.get_ylabel() or 'untitled'})"
        if not ax.get_ylabel().strip():
            found.append(f"{where}: no y label")
        elif not re.search(r"\[.+\]", ax.get_ylabel()):
            found.append(f"{where}: no unit [...] in the y label {ax.get_ylabel()!r}")
        if (
            ax.xaxis.get_visible()
            and any(t.get_visible() and t.get_text() for t in ax.get_xticklabels())
            and not re.search(r"\[.+\]", ax.get_xlabel())
        ):
            found.append(f"{where}: x tick labels but no x label with a unit {ax.get_xlabel()!r}")
        ax_box = ax.get_window_extent(renderer)
        for label, xy in _curves(ax):
            xy = xy[np.isfinite(xy).all(axis=1)]
            xy = xy[_inside(xy, ax_box, margin=0.5)]  # what is drawn (clipped to the axes)
            if not len(xy):
                continue
            for name, box in boxes:
                covered = float(np.mean(_inside(xy, box)))
                if covered > MAX_COVERED:
                    found.append(f"{name} covers {covered:.1%} of {label!r} in {where}")
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        texts += _tick_labels(ax)
    texts = [t for t in texts if t.get_visible() and t.get_text().strip()]
    fig_box = fig.bbox
    for text in texts:
        box = text.get_window_extent(renderer)
        if (
            box.x0 < fig_box.x0 - 1
            or box.y0 < fig_box.y0 - 1
            or box.x1 > fig_box.x1 + 1
            or box.y1 > fig_box.y1 + 1
        ):
            found.append(f"text {text.get_text()!r} extends beyond the figure (clipped)")
        for name, legend_box in boxes:
            if _overlap(box, legend_box) > 4.0:  # px^2: touching is fine
                found.append(f"{name} overlaps the text {text.get_text()!r}")
    for k, (name, box) in enumerate(boxes):
        for other, other_box in boxes[k + 1 :]:
            if _overlap(box, other_box) > 4.0:
                found.append(f"{name} overlaps {other}")
        if (
            box.x0 < fig_box.x0 - 1
            or box.y0 < fig_box.y0 - 1
            or box.x1 > fig_box.x1 + 1
            or box.y1 > fig_box.y1 + 1
        ):
            found.append(f"{name} extends beyond the figure (clipped)")
    return found


def check(saved, expected):
    """The example saved exactly the pictures `expected` (file names), PNG files, and none has a
    problem."""
    assert sorted(path.name for _, path in saved) == sorted(expected)
    report = []
    for fig, path in saved:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
        report += [f"{path.name}: {p}" for p in problems(fig)]
    assert not report, "\n".join(report)


FAST = {  # example script: the pictures its run() writes
    "msl_generation_of_fmus.py": ["GenerationOfFMUs.png"],
    "msl_elastogap.py": ["ElastoGap.png"],
    "elastogap_demo.py": ["ElastoGapDemo.png"],
    "msl_friction.py": ["Friction.png"],
    "hardstop.py": ["Hardstop.png"],
    "endstop.py": ["EndStop.png"],
}


@pytest.mark.parametrize("script", list(FAST))
def test_example_plot_is_readable(script, fmu_dir, tmp_path, figures):
    example = runpy.run_path(str(EXAMPLES / script))
    example["run"](out=tmp_path, fmu_dir=fmu_dir)
    check(figures, FAST[script])


def test_preload_plot_is_readable(tmp_path, figures):
    from contactfmu.cosim import Result
    from contactfmu.monolithic import preload

    example = runpy.run_path(str(EXAMPLES / "msl_preload.py"))
    t = np.linspace(0.0, 100.0, 2001)
    solution = preload(t, stop_time=100.0)
    result = Result(
        ["time"] + example["SIGNALS"],
        np.column_stack([t] + [solution[n] for n in example["SIGNALS"]]),
    )
    example["plot"](
        result, tmp_path / "PreLoad.png", f"communication step {example['FIXED_STEP']:g} s"
    )
    check(figures, ["PreLoad.png"])


def test_shared_plot_gives_each_unit_its_axes(tmp_path, figures):
    """A panel mixing positions and velocities is split; each axis names its unit."""
    from contactfmu import plots
    from contactfmu.cosim import Result

    t = np.linspace(0.0, 1.0, 201)
    names = ["time", "a.s_rel", "a.v_rel", "b.s_rel", "b.v_rel", "m.f"]
    values = [t, np.sin(t), np.cos(t), 2 * np.sin(t), 2 * np.cos(t), -np.abs(np.sin(3 * t))]
    result = Result(names, np.column_stack(values))
    ref = Result(names[:3], np.column_stack(values[:3]) * 1.0001)
    panels = [
        ("contact force", ["m.f"]),
        ("reference signals", ["a.s_rel", "a.v_rel", "b.s_rel", "b.v_rel"]),
    ]
    plots.plot(result, tmp_path / "shared.png", panels, "synthetic", ref)
    check(figures, ["shared.png"])
    ((fig, _),) = figures
    labels = [ax.get_ylabel() for ax in fig.axes]
    assert labels[:3] == [
        "contact force [N]",
        "relative position s_rel [m]",
        "relative velocity v_rel [m/s]",
    ]
    assert "reference" in labels[3]  # the deviation panel
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert legend == ["a.s_rel", "b.s_rel", "Dymola reference"]


def test_the_guard_sees_a_legend_on_the_data_and_a_missing_label(tmp_path):
    """The checks themselves: a legend in the middle of a line, an unlabelled twin axes."""
    from contactfmu import plots

    fig, ax = plots.figure(figsize=(6, 4))
    t = np.linspace(0.0, 1.0, 400)
    ax.plot(t, np.full_like(t, 0.5), label="flat line")
    ax.set_ylim(0.0, 1.0)
    ax.set_ylabel("y [m]")
    ax.legend(loc="center")
    twin = ax.twinx()
    twin.plot(t, t, label="rising line")
    twin.legend(loc="center")
    found = problems(fig)
    plots.pyplot().close(fig)
    assert any("covers" in p and "flat line" in p for p in found), found
    assert any("no y label" in p for p in found), found
    assert any("legend of axes 0 overlaps legend of axes 1" in p for p in found), found
    assert any("no x label" in p for p in found), found


def _y_tick_texts(fig, ax):
    """The y tick labels drawn in ax (ticks inside the view interval, visible, non-empty)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig).draw()
    lo, hi = sorted(ax.yaxis.get_view_interval())
    eps = 1e-9 * max(abs(lo), abs(hi), 1e-300)
    ticks = ax.yaxis.get_major_ticks() + ax.yaxis.get_minor_ticks()
    return [
        t.label1.get_text()
        for t in ticks
        if lo - eps <= t.get_loc() <= hi + eps
        and t.label1.get_visible()
        and t.label1.get_text().strip()
    ]


def test_step_panel_draws_a_constant_step_as_a_flat_line_with_readable_ticks(tmp_path, figures):
    """EndStop's adaptive runs take 1 ms steps whose float rounding alternates (1 ms -+ 1.1e-16):
    on a log axis every tick read 10^-3 and the noise was drawn as a solid block hiding two of the
    three runs. A constant step is a flat line on a linear axis with distinct tick labels, named
    with its value, and the runs sharing the panel have distinct line styles."""
    from contactfmu import plots
    from contactfmu.cosim.algorithms.adaptive import StepRecord

    noisy = [0.0009999999999998899, 0.001000000000000112]
    records = [
        StepRecord(k * 1e-3, noisy[k % 2], True, "", float("nan"), False) for k in range(2000)
    ]
    fig, ax = plots.figure(
        1, 1, figsize=(8, 3), steps={"rigid": records, "elastic": records, "friction": records}
    )
    ax.plot([0.0, 2.0], [0.0, 1.0])
    ax.set_ylabel("y [m]")
    ax.set_xlabel("time [s]")
    panel = fig.axes[-1]
    assert panel.get_ylabel() == "communication step [s]"
    labels = _y_tick_texts(fig, panel)
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    assert panel.get_yscale() == "linear"
    lo, hi = panel.get_ylim()
    assert lo <= 0.0 and 1e-3 < hi <= 2e-3
    lines = [line for line in panel.get_lines() if line.get_label().endswith("steps of 0.001 s")]
    assert len(lines) == 3, [line.get_label() for line in panel.get_lines()]
    for line in lines:  # flat: the float noise is not drawn
        assert set(np.asarray(line.get_ydata(), float)) == {1e-3}
    assert len({(line.get_linestyle(), line.get_linewidth()) for line in lines}) == 3
    plots.save(fig, tmp_path / "constant.png")
    check(figures, ["constant.png"])


def test_step_panel_keeps_a_log_axis_for_steps_over_decades(tmp_path, figures):
    """An adaptive run whose steps span decades (a contact bracketed down to 1e-9 s) keeps the
    logarithmic axis, with distinct tick labels."""
    from contactfmu import plots
    from contactfmu.cosim.algorithms.adaptive import StepRecord

    steps = [5e-3] * 50 + [1e-5, 1e-7, 1e-9, 1e-7, 1e-5] + [5e-3] * 50
    times = np.concatenate([[0.0], np.cumsum(steps)[:-1]])
    records = [StepRecord(t, h, True, "", 0.5, False) for t, h in zip(times, steps)]
    records.append(StepRecord(0.25, 1e-3, False, "event", float("nan"), False))
    fig, ax = plots.figure(1, 1, figsize=(8, 3), steps=records)
    ax.plot([0.0, 0.5], [0.0, 1.0])
    ax.set_ylabel("y [m]")
    ax.set_xlabel("time [s]")
    panel = fig.axes[-1]
    assert panel.get_yscale() == "log"
    lo, hi = panel.get_ylim()
    assert lo <= 1e-9 and hi >= 5e-3
    labels = _y_tick_texts(fig, panel)
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    assert [line.get_label() for line in panel.get_lines()][0] == "accepted (105)"
    plots.save(fig, tmp_path / "adaptive.png")
    check(figures, ["adaptive.png"])
