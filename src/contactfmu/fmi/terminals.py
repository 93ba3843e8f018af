"""Terminals: groups of a slave's variables that an importer may connect as one (FMI 3.0,
section "Terminals and Icons"), written to ``terminalsAndIcons/terminalsAndIcons.xml`` of the
FMU. The FMI 3.0 text lets FMUs of earlier versions carry the file too ("the usage of a separate
file enables backporting"); its ``fmiVersion`` then names the version that defines it, 3.0.

A terminal lists member variables, each with a ``memberName`` (matched between connected
terminals, ``matchingRule="plug"``: all members present) and a ``variableKind``:

- ``signal``: the connected values are meant to be equal (a plain copy);
- ``inflow`` / ``outflow``: a flow that obeys Kirchhoff's current law; for ``inflow`` a positive
  value flows into the FMU, for ``outflow`` out of it. FMI 3.0: "Connecting a single output
  outflow to a single input inflow, or vice versa automatically fulfills the flow constraint,
  while connecting two variables of the same flow type requires a negation".

The slaves of this library follow one rule for flows (``flow_kind``): an output flow is the
flow into its FMU (``inflow``), an input flow is the flow out of its FMU (``outflow``). Every
flow link from an output to an input is then "vice versa" in the sentence above: a plain copy,
sign-correct, with no negation, in any importer that honours the kinds.

Generic: names no component and no physical domain. Only the standard library is imported."""

from xml.etree.ElementTree import Element, SubElement, indent, tostring

PATH = "terminalsAndIcons/terminalsAndIcons.xml"
FMI_VERSION = "3.0"  # the version that defines the file (also in an FMI 2.0 FMU)

SIGNAL, INFLOW, OUTFLOW = "signal", "inflow", "outflow"
# FMI 3.0: signal, inflow and outflow members are restricted to these causalities
KIND_CAUSALITIES = ("input", "output", "parameter", "calculatedParameter")
# the library's rule for flows: what an output / input flow variable declares
FLOW_KINDS = {"output": INFLOW, "input": OUTFLOW}


def flow_kind(causality):
    """The variableKind of a flow variable of this causality (the library's rule, above)."""
    try:
        return FLOW_KINDS[causality]
    except KeyError:
        raise ValueError(
            f"a flow member must be an input or an output, not a {causality}"
        ) from None


class Member:
    """One TerminalMemberVariable: the model variable ``variable`` matched as ``member``."""

    __slots__ = ("variable", "member", "kind")

    def __init__(self, variable, member, kind):
        self.variable, self.member, self.kind = variable, member, kind


class Terminal:
    """One Terminal: ``name`` (unique among the FMU's terminals), ``kind`` (terminalKind: the
    connector type it stands for), its members, and ``description``."""

    __slots__ = ("name", "kind", "members", "description", "matching_rule")

    def __init__(self, name, kind, members, description="", matching_rule="plug"):
        self.name, self.kind, self.members = name, kind, tuple(members)
        self.description, self.matching_rule = description, matching_rule


def terminals_and_icons(terminals):
    """The fmiTerminalsAndIcons element listing `terminals`."""
    root = Element("fmiTerminalsAndIcons", {"fmiVersion": FMI_VERSION})
    node = SubElement(root, "Terminals")
    for terminal in terminals:
        attrib = {"name": terminal.name, "matchingRule": terminal.matching_rule}
        if terminal.kind:
            attrib["terminalKind"] = terminal.kind
        if terminal.description:
            attrib["description"] = terminal.description
        t = SubElement(node, "Terminal", attrib)
        for m in terminal.members:
            SubElement(
                t,
                "TerminalMemberVariable",
                {"variableName": m.variable, "memberName": m.member, "variableKind": m.kind},
            )
    return root


def to_bytes(terminals):
    """terminalsAndIcons.xml for `terminals`, UTF-8 with its XML declaration."""
    root = terminals_and_icons(terminals)
    indent(root)
    return tostring(root, encoding="UTF-8", xml_declaration=True) + b"\n"


def members(root):
    """{terminal name: {memberName: variableName}} of the fmiTerminalsAndIcons element `root`."""
    return {
        terminal.get("name"): {
            m.get("memberName"): m.get("variableName")
            for m in terminal.findall("TerminalMemberVariable")
        }
        for terminal in root.iter("Terminal")
    }


def problems(root, causalities):
    """What is wrong with the fmiTerminalsAndIcons element `root` of an FMU whose variables have
    the causalities `causalities` (name -> causality): an unknown variable, a variableKind this
    library does not use, a member whose causality its kind excludes (signal: input, output or
    parameter; inflow: an output, outflow: an input, the rule of ``flow_kind``), a missing or
    repeated memberName, a repeated terminal name, a fmiVersion other than 3.0."""
    found = []
    if root.tag != "fmiTerminalsAndIcons":
        return [f"root element is <{root.tag}>, not <fmiTerminalsAndIcons>"]
    if root.get("fmiVersion") != FMI_VERSION:
        found.append(f"fmiVersion is {root.get('fmiVersion')!r}, not {FMI_VERSION!r}")
    names = set()
    for terminal in root.iter("Terminal"):
        name = terminal.get("name")
        if name in names:
            found.append(f"terminal {name} declared twice")
        names.add(name)
        members = set()
        for m in terminal.findall("TerminalMemberVariable"):
            variable, member, kind = (
                m.get("variableName"),
                m.get("memberName"),
                m.get("variableKind"),
            )
            where = f"terminal {name}, member {member or '(no memberName)'}"
            if not member:
                found.append(f"{where}: no memberName ({terminal.get('matchingRule')} matching)")
            elif member in members:
                found.append(f"{where}: memberName used twice")
            members.add(member)
            if variable not in causalities:
                found.append(f"{where}: variable {variable!r} does not exist")
                continue
            causality = causalities[variable]
            if kind == SIGNAL:
                allowed = KIND_CAUSALITIES
            elif kind in (INFLOW, OUTFLOW):
                allowed = tuple(c for c, k in FLOW_KINDS.items() if k == kind)
            else:
                found.append(f"{where}: variableKind {kind!r} is none of signal, inflow, outflow")
                continue
            if causality not in allowed:
                found.append(
                    f"{where}: {variable} is {_article(causality)}, {_article(kind)} member must "
                    f"be {' or '.join(allowed)}"
                )
    return found


def _article(word):
    return ("an " if word[0] in "aeiou" else "a ") + word
