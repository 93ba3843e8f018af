"""Each FMU carries its own documentation (FMI 2.0 section 2.3: documentation/index.html), made
from the component's home (contactfmu.pages): the equations and co-simulation notes of its
README.md, every variable with its unit, start value and range, and a figure; the model
description itself is one or two sentences that point there."""

import re
import zipfile
from html import escape as html_escape
from html.parser import HTMLParser

import pytest
from fmpy import read_model_description

from contactfmu import components, pages


class Page(HTMLParser):
    """The text, headings, table rows and referenced files of an HTML page."""

    def __init__(self):
        super().__init__()
        self.text, self.headings, self.rows, self.sources = [], [], [], []
        self._tag, self._row = None, None

    def handle_starttag(self, tag, attrs):
        self._tag = tag
        if tag == "tr":
            self._row = []
        for key, value in attrs:
            if key in ("src", "href"):
                self.sources.append(value)

    def handle_endtag(self, tag):
        if tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None
        self._tag = None

    def handle_data(self, data):
        self.text.append(data)
        if self._tag in ("h1", "h2"):
            self.headings.append(data.strip())
        if self._row is not None and self._tag in ("td", "code"):
            self._row.append(data.strip())


def parse(text):
    page = Page()
    page.feed(text)
    return page


@pytest.mark.parametrize("name", components.NAMES)
def test_fmu_ships_its_page_with_every_variable_and_the_figure(fmu_dir, name):
    path = fmu_dir / f"{name}.fmu"
    md = read_model_description(str(path))
    with zipfile.ZipFile(path) as z:
        files = set(z.namelist())
        page = parse(z.read("documentation/index.html").decode("utf-8"))
    assert page.headings[0] == name and "Equations" in page.headings
    # every file the page refers to is inside the FMU's documentation folder
    assert page.sources and all(f"documentation/{src}" in files for src in page.sources), (
        page.sources
    )
    rows = {row[0]: row for row in page.rows if row}
    for v in md.modelVariables:
        assert v.name in rows, f"{name}: {v.name} missing from the page"
        row = rows[v.name]
        if v.unit:
            assert v.unit in row, (v.name, row)
        if v.causality == "parameter" and v.start is not None:
            start = {"true": "true", "false": "false"}.get(v.start, None) or repr(
                type_of(v)(v.start)
            )
            assert start in row, (v.name, v.start, row)
        if v.min is not None and v.max is not None:
            assert any(str(v.min) in cell and str(v.max) in cell for cell in row), (v.name, row)


def type_of(v):
    return {"Real": float, "Integer": int}.get(v.type, str)


@pytest.mark.parametrize("name", components.NAMES)
def test_model_description_is_one_or_two_sentences_pointing_to_the_page(fmu_dir, name):
    description = read_model_description(str(fmu_dir / f"{name}.fmu")).description
    sentences = 1 + len(re.findall(r"[.!?]\s+[A-Z]", description))
    assert sentences <= 2 and len(description.split()) <= 45, description
    assert "documentation/index.html" in description


def test_page_carries_the_readme_equations_and_the_cross_check_figure():
    """The page is the component's README.md rendered: its equations appear verbatim, and the
    figure's caption names the cross-check experiment of the component's spec."""
    html = pages.render("ElastoGap")
    readme = (components.home("ElastoGap") / "README.md").read_text()
    equation = next(
        line.strip() for line in readme.splitlines() if line.strip().startswith("f_d = d*v_rel")
    )
    assert html_escape(equation) in html
    what = components.spec("ElastoGap").CROSS_CHECK[0]
    assert what.split(":")[0] in html and pages.FIGURE in html


def test_registry_is_every_folder_with_a_slave():
    """The registry is found: each folder of components/ with a slave.py is an FMU named like the
    folder and its slave class, with a spec and a README."""
    folders = sorted(p.parent.name for p in components.HOME.glob("*/slave.py"))
    assert list(components.NAMES) == folders and len(folders) == 11
    for name in folders:
        assert pages.slave_class(name).__name__ == name
        assert (components.home(name) / "README.md").is_file()
        assert isinstance(components.spec(name).DOCUMENTED_PARAMETERS, tuple)
    with pytest.raises(ValueError, match="unknown FMU 'Nope'; known: Damper, ElastoGap"):
        components.home("Nope")


@pytest.mark.parametrize("name", components.NAMES)
def test_spec_names_the_examples_and_reference_results_that_use_the_component(name):
    """A component's spec lists every example that builds a system with its FMU (and no other),
    and the MSL reference results of the MSL examples among them, each a folder of refdata/."""
    root = components.HOME.parents[2]
    spec = components.spec(name)
    using = sorted(
        p.stem
        for p in (root / "examples").glob("*.py")
        if re.search(rf"[\"']{name}[\"']|{name}\.fmu", p.read_text())
    )
    assert list(spec.EXAMPLES) == using
    refdata = components.HOME.parent / "refdata"
    assert all((refdata / r).is_dir() for r in spec.REFERENCE_RESULTS)
    assert set(spec.REFERENCE_RESULTS) == {
        d.name
        for d in refdata.iterdir()
        if d.is_dir() and "msl" + d.name.lower() in {e.replace("_", "") for e in using}
    }
    assert all(e in pages.render(name) for e in spec.EXAMPLES + spec.REFERENCE_RESULTS)
