"""Each FMU's own documentation page, shipped in the FMU as ``documentation/index.html`` (FMI 2.0
section 2.3), made from the component's home: its ``README.md`` (what it is, the equations, the
co-simulation notes), the variable table of its slave (parameters with units, ranges and
defaults; inputs; outputs) and its figure (``figure.png``: the FMU's cross-check experiment,
drawn by ``python -m contactfmu.pages --figures``).

An importer's user who has only the .fmu has the whole documentation of the component."""

import argparse
import html
import importlib
import shutil
from pathlib import Path

import markdown

from . import __version__, components

FIGURE = "figure.png"

STYLE = """body { font-family: sans-serif; max-width: 60em; margin: 2em auto; line-height: 1.45; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #eee; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; }
code { background: #f6f6f6; }
img { max-width: 100%; }
.meta { color: #666; font-size: 0.9em; }
.num { white-space: nowrap; }"""


def slave_class(name):
    """The slave class of component `name` (its FMU's Python side)."""
    components.home(name)
    return getattr(importlib.import_module(f"{components.__name__}.{name}.slave"), name)


def _cell(text):
    return html.escape(str(text)).replace("|", "&#124;")


def _start(var):
    if var.start is None:
        return ""
    if isinstance(var.start, bool):
        return "true" if var.start else "false"
    return repr(var.start)


def variables_html(cls):
    """The variable table of a slave class as HTML tables, one per causality."""
    parts = []
    for causality, title in (
        ("parameter", "Parameters"),
        ("input", "Inputs"),
        ("output", "Outputs"),
    ):
        rows = [v for v in cls.variable_table() if v.causality == causality]
        if not rows:
            continue
        head = (
            "<tr><th>name</th><th>type</th><th>unit</th>"
            + ("<th>start</th><th>range</th>" if causality != "output" else "")
            + "<th>description</th></tr>"
        )
        body = []
        for v in rows:
            cells = [f"<code>{_cell(v.name)}</code>", v.type, _cell(v.unit or "")]
            if causality != "output":
                ranged = v.min is not None or v.max is not None
                cells += [_cell(_start(v)), _cell(v.valid_range() if ranged else "")]
            cells.append(_cell(v.description))
            classes = (
                ["", "", ' class="num"']
                + ([' class="num"'] * 2 if causality != "output" else [])
                + [""]
            )
            body.append(
                "<tr>" + "".join(f"<td{k}>{c}</td>" for k, c in zip(classes, cells)) + "</tr>"
            )
        parts.append(f"<h2>{title}</h2>\n<table>\n{head}\n" + "\n".join(body) + "\n</table>")
    return "\n".join(parts)


def render(name):
    """The HTML page of component `name`."""
    home = components.home(name)
    cls = slave_class(name)
    text = (home / "README.md").read_text(encoding="utf-8")
    body = markdown.markdown(text, extensions=["tables", "fenced_code"])
    de = cls.default_experiment
    meta = (
        f'<p class="meta">{_cell(name)}.fmu, contactfmu {__version__}: FMI 2.0 Co-Simulation. '
        f"DefaultExperiment {de.start_time:g} s to {de.stop_time:g} s, step {de.step_size:g} s; "
        f"canInterpolateInputs: {'true' if cls.INPUT_DERIVATIVES else 'false'}; maxOutputDerivativeOrder: "
        f"{1 if any(v.derivative for v in cls.variable_table()) else 0}.</p>"
    )
    spec = components.spec(name)
    uses = ""
    if spec.EXAMPLES:
        listed = ", ".join(f"<code>examples/{e}.py</code>" for e in spec.EXAMPLES)
        uses = f"<h2>Where it is used</h2>\n<p>Examples in the contactfmu repository: {listed}."
        if spec.REFERENCE_RESULTS:
            refs = ", ".join(f"<code>{r}</code>" for r in spec.REFERENCE_RESULTS)
            uses += (
                f" Checked against the MSL reference results (Dymola) of the MSL examples {refs} "
                f"(<code>src/contactfmu/refdata/</code>)."
            )
        uses += "</p>"
    figure = ""
    if (home / FIGURE).is_file():
        what = spec.CROSS_CHECK[0]
        figure = (
            f'<h2>Figure</h2>\n<p><img src="{FIGURE}" alt="{_cell(name)} in its cross-check experiment"></p>\n'
            f"<p>The FMU alone in its cross-check experiment (default parameters): {_cell(what)}.</p>"
        )
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{_cell(name)}</title>\n'
        f"<style>\n{STYLE}\n</style>\n</head>\n<body>\n{body}\n{meta}\n{variables_html(cls)}\n{figure}\n{uses}\n"
        f"</body>\n</html>\n"
    )


def write(name, folder):
    """Write the documentation folder of FMU `name` (index.html and its figure) into `folder`."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(render(name), encoding="utf-8")
    figure = components.home(name) / FIGURE
    if figure.is_file():
        shutil.copyfile(figure, folder / FIGURE)
    return folder / "index.html"


def draw_figure(fmu_path, name, path):
    """The figure of component `name`: the signals its spec names (FIGURE_SIGNALS) over its
    cross-check experiment, the FMU run alone in the project's master."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    from . import crosscheck

    ref, _, _, what = crosscheck.reference(fmu_path)
    signals = components.spec(name).FIGURE_SIGNALS
    table = {v.name: v for v in slave_class(name).variable_table()}
    fig, axes = plt.subplots(
        len(signals), 1, sharex=True, figsize=(7.0, 1.2 + 1.5 * len(signals)), squeeze=False
    )
    for ax, signal in zip(axes[:, 0], signals):
        discrete = table[signal].type != "Real"  # a state: drawn as the steps it takes
        ax.plot(ref.time, ref[signal], lw=1.2, drawstyle="steps-post" if discrete else "default")
        if discrete:
            ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        unit = table[signal].unit
        ax.set_ylabel(f"{signal} [{unit}]" if unit and unit != "1" else signal)
        ax.grid(alpha=0.3)
    axes[-1, 0].set_xlabel("time [s]")
    axes[0, 0].set_title(f"{name}: cross-check experiment, default parameters", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Write the FMUs' documentation pages (and figures)."
    )
    parser.add_argument(
        "--out", default="fmu-docs", help="folder for <Name>/index.html (default: fmu-docs/)"
    )
    parser.add_argument(
        "--figures",
        metavar="FMU_DIR",
        help="first draw each component's figure.png from the built FMUs in FMU_DIR",
    )
    args = parser.parse_args(argv)
    for name in components.NAMES:
        if args.figures:
            draw_figure(Path(args.figures) / f"{name}.fmu", name, components.home(name) / FIGURE)
        print(write(name, Path(args.out) / name))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
