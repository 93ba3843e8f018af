"""The plots of the examples and studies: the conventions every PNG follows (each axes
labelled with quantity and unit, legends outside the data, results solid and references black
dashed on top, constrained layout), the shared signal plot with its reference tube, and the panel
of the communication steps an adaptive run took."""

# Conventions of every example's PNG: each axes labelled with quantity and unit (twin axes too),
# legends outside the data (right of or below the axes, or a figure legend), results solid and
# references black dashed on top (named after their source), constrained layout, PNG at DPI.

DPI = 120
REFERENCE_STYLE = dict(
    color="black", ls="--", lw=1.0, zorder=3
)  # a reference curve: dashed, on top
QUANTITIES = {  # signal name suffix -> (quantity, unit) for axis labels of the shared plot()
    "s": ("position", "m"),
    "s_rel": ("relative position", "m"),
    "v": ("velocity", "m/s"),
    "v_rel": ("relative velocity", "m/s"),
    "a": ("acceleration", "m/s2"),
    "f": ("force", "N"),
    "F": ("force", "N"),
}


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(nrows=1, ncols=1, steps=None, **kwargs):
    """plt.subplots with the constrained layout (nothing clipped, legends outside get room).

    steps: the communication steps of adaptive runs (a result's ``steps``, or {label: steps} for
    several runs; None or empty for fixed steps): a panel below the others, spanning the figure,
    shows them over time (plot_steps)."""
    runs = steps if isinstance(steps, dict) else {"": steps}
    runs = {label: records for label, records in runs.items() if records}
    if not runs:
        return pyplot().subplots(nrows, ncols, layout="constrained", **kwargs)
    import numpy as np

    width, height = kwargs.pop("figsize", (10, 5))
    rows = list(kwargs.pop("height_ratios", [1.0] * nrows))
    sharex, squeeze = kwargs.pop("sharex", False), kwargs.pop("squeeze", True)
    fig = pyplot().figure(layout="constrained", figsize=(width, height + 2.2))
    grid = fig.add_gridspec(
        nrows + 1, ncols, height_ratios=rows + [sum(rows) * 2.2 / height], **kwargs
    )
    axes = np.empty((nrows, ncols), dtype=object)
    for i in range(nrows):
        for j in range(ncols):
            axes[i, j] = fig.add_subplot(grid[i, j], sharex=axes[0, j] if sharex and i else None)
            if sharex and i < nrows - 1:
                axes[i, j].tick_params(labelbottom=False)
    ax = fig.add_subplot(grid[nrows, :])
    for k, (label, records) in enumerate(runs.items()):
        plot_steps(
            ax, records, label, color=f"C{k}", legend=False, style=k if len(runs) > 1 else None
        )
    ax.set_xlabel("time [s]")
    legend_right(ax)
    if squeeze:
        axes = axes[0, 0] if axes.size == 1 else axes.reshape(-1) if 1 in (nrows, ncols) else axes
    return fig, axes


def legend_right(ax, handles=None, **kwargs):
    """The legend of ax to the right of its axes box, outside the data."""
    if handles is not None:
        kwargs["handles"] = handles
    return ax.legend(
        loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize=8, **kwargs
    )


def legend_below(fig, handles, ncol=None, **kwargs):
    """One figure legend below all axes (constrained layout makes room for it)."""
    return fig.legend(
        handles=handles, loc="outside lower center", ncol=ncol or len(handles), fontsize=8, **kwargs
    )


def save(fig, path, dpi=DPI):
    """Write the figure as PNG and close it; returns path."""
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


def quantity(name):
    """(quantity, unit) of a signal from its name's last part (mass.s -> position, m), or None."""
    return QUANTITIES.get(name.rsplit(".", 1)[-1])


def _split_by_unit(ylabel, signals):
    """[(ylabel, signals)]: the panel as is if its signals share one unit, else one panel per
    variable labelled "<quantity> <variable> [<unit>]" (an axis never mixes m and m/s)."""
    units = {(quantity(n) or (None, None))[1] for n in signals}
    if len(units) <= 1:
        unit = units.pop() if units else None
        return [(f"{ylabel} [{unit}]" if unit and "[" not in ylabel else ylabel, signals)]
    groups = {}
    for name in signals:
        groups.setdefault(name.rsplit(".", 1)[-1] if quantity(name) else None, []).append(name)
    return [
        (f"{quantity(names[0])[0]} {var} [{quantity(names[0])[1]}]" if var else ylabel, names)
        for var, names in groups.items()
    ]


# significant digits of the plotted steps: float noise (1 ms +- 1e-16) is not drawn
STEP_DIGITS = 12
CONSTANT_STEP = 1e-9  # relative spread of the steps below which they are one constant step
LOG_STEPS = 10.0  # ratio of the largest to the smallest step from which the axis is logarithmic
# one style per run sharing the step panel, drawn in turn from wide to narrow: equal steps stay visible
STEP_STYLES = [
    dict(lw=2.4, ls="-"),
    dict(lw=1.5, ls="--"),
    dict(lw=1.0, ls=":"),
    dict(lw=0.8, ls="-."),
]


def rounded_steps(values):
    """The steps rounded to STEP_DIGITS significant digits (what the step panel draws)."""
    return [float(f"{h:.{STEP_DIGITS}g}") for h in values]


def constant_step(values):
    """The step if all `values` are one step (relative spread below CONSTANT_STEP), else None."""
    values = [h for h in values if h > 0]
    if not values:
        return None
    lo, hi = min(values), max(values)
    return float(f"{hi:.{STEP_DIGITS}g}") if hi - lo <= CONSTANT_STEP * hi else None


def plot_steps(ax, records, label="", color="C0", legend=True, style=None):
    """The communication steps of an adaptive run over time: accepted (line), rejected for the error
    (x) and for an event inside them (v); the contacts show as dips. label names the run where
    several share the axes; style (0, 1, ...) its line style there, from wide solid to narrow
    dotted, so that runs with the same steps stay visible (None: one thin solid line). The steps
    are drawn rounded to 12 significant
    digits, so that float noise in a step (1 ms +- 1e-16) is not drawn as a dip; the axis is
    logarithmic when the steps of all runs on it span a factor of 10 or more, else linear from 0
    (a constant step is a flat line, named with its value in the legend: "2000 steps of 0.001 s")."""
    prefix = f"{label}: " if label else ""
    accepted = [(r.t, r.h) for r in records if r.accepted]
    times, steps = [t for t, _ in accepted], rounded_steps(h for _, h in accepted)
    constant = constant_step(steps)
    name = (
        f"{len(accepted)} steps of {constant:g} s"
        if constant is not None
        else f"accepted ({len(accepted)})"
    )
    ax.step(
        times,
        steps,
        where="post",
        color=color,
        label=prefix + name,
        **(dict(lw=1.0, ls="-") if style is None else STEP_STYLES[style % len(STEP_STYLES)]),
    )
    drawn = steps
    for reason, marker in (("error", "x"), ("event", "v")):
        rejected = [(r.t, r.h) for r in records if r.reason == reason]
        if rejected:
            ax.plot(
                [t for t, _ in rejected],
                rounded_steps(h for _, h in rejected),
                marker,
                color=color,
                ms=4,
                ls="none",
                alpha=0.7,
                label=f"{prefix}rejected: "
                f"{'error estimate' if reason == 'error' else 'event inside'} "
                f"({len(rejected)})",
            )
            drawn = drawn + rounded_steps(h for _, h in rejected)
    ax._contactfmu_steps = getattr(ax, "_contactfmu_steps", []) + [h for h in drawn if h > 0]
    _step_axis(ax, ax._contactfmu_steps)
    ax.set_ylabel("communication step [s]")
    ax.grid(True, which="major", alpha=0.3)
    if legend:
        legend_right(ax)


def _step_axis(ax, steps):
    """Scale and limits of the step panel for all the steps drawn on it (plot_steps)."""
    if not steps:
        return
    lo, hi = min(steps), max(steps)
    if hi >= LOG_STEPS * lo:
        ax.set_yscale("log")
        ax.set_ylim(lo / 2, hi * 2)
    else:
        from matplotlib.ticker import MaxNLocator

        ax.set_yscale("linear")
        ax.set_ylim(0.0, 1.25 * hi)
        ax.yaxis.set_major_locator(MaxNLocator(nbins=5))
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3), useMathText=True)


def plot(result, path, panels, title, ref=None, ref_label="Dymola reference", tol=2e-3):
    """Plot panels [(ylabel, [signals])] against time, one axes per panel (a panel whose signals
    have different units is split, one axes per quantity), each with its legend to the right.
    With a reference `ref` (a Result): its signals black dashed on top, and a last panel of
    |result - reference| / range(reference) (log scale) with the tube's half-height `tol`."""
    import numpy as np
    from matplotlib.lines import Line2D

    panels = [p for ylabel, signals in panels for p in _split_by_unit(ylabel, signals)]
    compared = [n for _, signals in panels for n in signals if ref is not None and n in ref]
    records = getattr(result, "steps", None)
    rows = len(panels) + bool(compared) + bool(records)
    fig, axes = figure(rows, 1, figsize=(10, 0.9 + 2.4 * rows), sharex=True, squeeze=False)
    for ax, (ylabel, signals) in zip(axes[:, 0], panels):
        for name in signals:
            ax.plot(result.time, result[name], lw=1.6, label=name)
            if name in compared:
                ax.plot(ref.time, ref[name], **REFERENCE_STYLE)
        handles, _ = ax.get_legend_handles_labels()
        if any(n in compared for n in signals):
            handles.append(Line2D([], [], label=ref_label, **REFERENCE_STYLE))
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        legend_right(ax, handles)
    if compared:
        ax = axes[len(panels), 0]
        floor, top = 1e-9, 10 * tol
        for name in compared:
            scale = max(
                np.ptp(ref[name]), abs(np.min(ref[name])), 1e-12
            )  # as the tube's dy = tol*scale
            deviation = np.abs(result[name] - np.interp(result.time, ref.time, ref[name])) / scale
            ax.plot(result.time, np.maximum(deviation, floor), lw=1.0, label=name)
            top = max(top, 3 * np.nanmax(deviation, initial=0.0))
        ax.axhline(tol, color="black", ls=":", lw=1.2, label=f"{tol:g}: tube half-height")
        ax.set_yscale("log")
        ax.set_ylim(floor, top)
        ax.set_ylabel("|FMU - reference| / range [-]")
        ax.set_title(
            f"deviation from the {ref_label} (range: max(max - min, |min|) of the reference signal, "
            f"as in the tube; floor {floor:g})",
            fontsize=9,
        )
        ax.grid(True, which="major", alpha=0.3)
        legend_right(ax)
    if records:
        plot_steps(axes[-1, 0], records)
    axes[-1, 0].set_xlabel("time [s]")
    if ref is not None:
        title += f"\nsolid: FMU co-simulation, dashed: {ref_label}"
    fig.suptitle(title)
    return save(fig, path)
