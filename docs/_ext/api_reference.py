"""The `api-reference` directive: a module's public names in sections a user reads in order,
each opening with a summary table (the name, linked to its entry, and one line), then the
entries. The page is built from the module itself: a public name that no section claims
fails the build, so a new function cannot go undocumented.

    .. api-reference:: sympile.tensor
       :exclude: Lop, Rop
       :ops: ops

       Constructors: constructors sympile.tensor.type
       Elementwise: elemwise sympile.tensor.math

Each content line is `Title: selector ...` (without content: functions, classes, then
ops); a selector is a module name (the names defined there, Op classes left to `ops` where
the page has an Op page), `functions` (all but classes), `constructors` (TensorType
instances such as dmatrix, as a grid by dtype and rank), `elemwise` (Elemwise instances
such as exp, with the numpy or scipy function they follow), `classes` (the classes that are
not Ops), `data` (the values that are neither functions nor classes) or `ops` (the Op
classes). `:ops: ops` sends the Op
classes to their own page (the page named; they are for op writers), and `:exclude:` names
the ones another page documents; `:elsewhere:` lists names whose entry is on another page
(`name=target`, a class's own module path by default): their summary row links there (a
class has one entry, under its own module's path); `:partial:` makes a page of its
sections' names alone (the Op classes' page); `:docstring:` opens with the module's
docstring. The names are the module's `__all__` where it has one. Submodules are never
entries.
"""

import importlib
import inspect
import re

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from sphinx.errors import ExtensionError

# The constructors' grid: the dtype prefixes in Theano's order, and each rank's column.
_PREFIXES = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "ub": "uint8",
             "uw": "uint16", "ui": "uint32", "ul": "uint64", "f": "float32", "d": "float64",
             "c": "complex64", "z": "complex128"}
_RANKS = ("scalar", "vector", "row", "col", "matrix", "tensor3", "tensor4", "tensor5",
          "tensor6", "tensor7")
_CONSTRUCTOR = re.compile(rf"^({'|'.join(sorted(_PREFIXES, key=len, reverse=True))})"
                          rf"({'|'.join(_RANKS)}|matrices)s?$")


def _plural(name: str) -> str:
    return name[:-1] + "ces" if name.endswith("matrix") else name + "s"


# Without content: what a reader looks for first, then the classes, the ops last.
DEFAULT_SECTIONS = ("Functions: functions", "Classes: classes",
                    "Ops (for writers of ops and rewrites): ops")


def _literal_blocks(doc: str) -> list[str]:
    """A docstring's lines as reST, its indented examples (written after a plain
    paragraph, as sympile's docstrings write them) made literal blocks, not quoted prose."""
    lines = []
    for line in doc.splitlines():
        text = [previous for previous in lines if previous.strip()]
        if (line.startswith("    ") and lines and not lines[-1].strip() and text
                and not text[-1].startswith(" ") and not text[-1].endswith("::")):
            lines[-1:] = ["::", ""]
        lines.append(line)
    return lines


def _summary(obj) -> str:
    """The first sentence of the docstring's first paragraph, on one line."""
    doc = inspect.getdoc(obj) or ""
    paragraph = " ".join(doc.split("\n\n")[0].split())
    match = re.match(r"(.+?\.)(\s|$)", paragraph)
    line = (match.group(1) if match else paragraph).rstrip(":")
    if len(line) > 110:
        line = line[:110].rsplit(" ", 1)[0] + " ..."
    return line.replace("|", "\\|")


def _follows(elemwise) -> str:
    """The numpy or scipy function an Elemwise instance computes, or its own summary."""
    function = type(elemwise.scalar_op).nfunc
    name = getattr(function, "__name__", "")
    module = getattr(function, "__module__", None)
    if module == "numpy":
        return f"``numpy.{name}``, elementwise"
    if module is None and name:
        return f"``scipy.special.{name}``, elementwise"
    return _summary(function) or f"{elemwise}, elementwise"


class ApiReference(Directive):
    required_arguments = 1
    has_content = True
    option_spec = {"exclude": directives.unchanged, "ops": directives.unchanged,
                   "partial": directives.flag, "elsewhere": directives.unchanged,
                   "docstring": directives.flag}

    def run(self):
        from sympile.graph.op import Op
        from sympile.tensor.elemwise import Elemwise
        from sympile.tensor.type import TensorType

        self.Op, self.Elemwise, self.TensorType = Op, Elemwise, TensorType
        self.module_name = self.arguments[0]
        self.elsewhere = {}
        for item in self.options.get("elsewhere", "").split(","):
            name, _, target = item.strip().partition("=")
            if name:
                self.elsewhere[name] = target
        module = importlib.import_module(self.module_name)
        excluded = {n.strip() for n in self.options.get("exclude", "").split(",") if n.strip()}
        public = getattr(module, "__all__", None) or [n for n in dir(module)
                                                       if not n.startswith("_")]
        names = [n for n in public if n not in excluded
                 and not inspect.ismodule(getattr(module, n))]
        sections, claimed = [], set()
        for line in self.content or DEFAULT_SECTIONS:
            if not line.strip():
                continue
            title, _, selectors = line.partition(":")
            members = [n for n in names if n not in claimed
                       and any(self._selects(s, n, getattr(module, n))
                               for s in selectors.split())]
            claimed.update(members)
            sections.append((title.strip(), members))
        if "ops" in self.options:
            claimed.update(n for n in names if self._selects("ops", n, getattr(module, n)))
        unclaimed = sorted(set(names) - claimed)
        if unclaimed and "partial" not in self.options:
            raise ExtensionError(f"api-reference {self.module_name}: no section lists "
                                 f"{', '.join(unclaimed)} (docs/_ext/api_reference.py)")
        lines = [f".. py:currentmodule:: {self.module_name}", ""]
        if "docstring" in self.options:
            lines += _literal_blocks(inspect.getdoc(module) or "") + [""]
        if "ops" in self.options:
            lines += [f"The Op classes are on :doc:`their own page <{self.options['ops']}>` "
                      f"(for writers of ops and rewrites).", ""]
        result = self._parse(lines)
        for title, members in sections:
            if not members:
                continue
            # Ids from the module and the title: the same title on two pages is two targets.
            slug = re.sub(r"[^a-z0-9]+", "-", f"{self.module_name} {title}".lower()).strip("-")
            section = nodes.section(ids=[slug])
            section += nodes.title(text=title)
            section += self._parse(self._section(members, module))
            result.append(section)
        return result

    def _parse(self, lines):
        container = nodes.section()
        self.state.nested_parse(StringList(lines, source=self.module_name), 0, container)
        return container.children

    def _selects(self, selector, name, obj) -> bool:
        if selector == "constructors":
            return isinstance(obj, self.TensorType) or bool(_CONSTRUCTOR.match(name))
        if selector == "elemwise":
            return isinstance(obj, self.Elemwise)
        if selector == "ops":
            return inspect.isclass(obj) and issubclass(obj, self.Op)
        if selector == "functions":
            return not inspect.isclass(obj) and not isinstance(obj, self.TensorType)
        if selector == "data":
            return not (callable(obj) or inspect.isclass(obj)
                        or isinstance(obj, self.TensorType))
        if selector == "classes":
            return inspect.isclass(obj) and not issubclass(obj, self.Op)
        if isinstance(obj, (self.Op, self.TensorType)) or (
                "ops" in self.options and self._selects("ops", name, obj)):
            return False
        return getattr(obj, "__module__", None) == selector

    def _section(self, members, module):
        lines = []
        grid = [n for n in members if _CONSTRUCTOR.match(n)]
        others = [n for n in members if n not in grid]
        if grid:
            lines += self._grid(grid)
        # Functions before classes, as a reader looks for them.
        others.sort(key=lambda n: (inspect.isclass(getattr(module, n)), n.lower()))
        groups = self._alias_groups(others, module)
        if groups:
            lines += [".. list-table::", "   :widths: 25 75", ""]
            for group in groups:
                shown = ", ".join(self._link(n, module) for n in group)
                lines += [f"   * - {shown}", f"     - {self._line(group[0], module)}"]
            lines.append("")
        for name in grid:
            obj = getattr(module, name)
            if isinstance(obj, self.TensorType):
                lines += [f".. py:data:: {name}", "",
                          f"   ``{obj}``: ``{name}('x')`` makes an input variable.", ""]
        for group in groups:
            if group[0] not in self.elsewhere:
                lines += self._entry(group, module)
        return lines

    def _link(self, name, module) -> str:
        """A link to the name's entry: here, or (`:elsewhere:`) the target given, a class's
        own module path by default."""
        if name not in self.elsewhere:
            return f":py:obj:`{name}`"
        obj = getattr(module, name)
        target = self.elsewhere[name] or f"{obj.__module__}.{obj.__qualname__}"
        return f":py:obj:`{name} <{target}>`"

    def _alias_groups(self, members, module):
        """Names bound to one Elemwise instance, as one entry (abs, abs_, absolute)."""
        groups, seen = [], {}
        for name in members:
            obj = getattr(module, name)
            if isinstance(obj, self.Elemwise) and id(obj) in seen:
                seen[id(obj)].append(name)
                continue
            group = [name]
            groups.append(group)
            if isinstance(obj, self.Elemwise):
                seen[id(obj)] = group
        return groups

    def _line(self, name, module) -> str:
        obj = getattr(module, name)
        if isinstance(obj, (list, tuple)):
            return f"``{obj!r}``"
        return _follows(obj) if isinstance(obj, self.Elemwise) else _summary(obj)

    def _entry(self, group, module):
        obj = getattr(module, group[0])
        full = f"{self.module_name}.{group[0]}"
        if isinstance(obj, self.Elemwise):
            arity = obj.scalar_op.nin
            parameters = ", ".join("xyz"[:arity]) if arity <= 3 else "*inputs"
            if obj.scalar_op.associative:
                parameters += ", ..."
            signatures = [f"{n}({parameters})" for n in group]
            lines = [f".. py:function:: {signatures[0]}"]
            lines += [f"                 {s}" for s in signatures[1:]]
            return lines + ["", f"   {_follows(obj)}, with numpy's broadcasting and result "
                            f"dtypes. ``{group[0]}`` is an Elemwise op: calling it builds a "
                            f"node whose ``op`` is ``{group[0]}`` itself.", ""]
        if inspect.isclass(obj):
            return [f".. autoclass:: {full}", ""]
        if callable(obj):
            return [f".. autofunction:: {full}", ""]
        if isinstance(obj, (list, tuple)):
            return [f".. py:data:: {group[0]}", f"   :value: {obj!r}", ""]
        return [f".. autodata:: {full}", "   :no-value:", ""]

    def _grid(self, names):
        """Constructors by dtype (rows) and rank (columns): the type, and its plural."""
        present = set(names)
        ranks = [r for r in _RANKS if any(p + r in present for p in _PREFIXES)]
        lines = ["Each name is a TensorType: ``dmatrix('x')`` makes an input named x, and "
                 "``dmatrices('x', 'y')`` (or ``dmatrices('xy')``) several, one per name or "
                 "per character. A row is a matrix of one row (its first axis "
                 "broadcastable), a col one of one column.", "",
                 ".. list-table::", "   :header-rows: 1", "",
                 "   * - dtype", *(f"     - {r}" for r in ranks)]
        for prefix, dtype in _PREFIXES.items():
            if not any(prefix + r in present for r in ranks):
                continue
            lines.append(f"   * - {dtype}")
            for rank in ranks:
                name = prefix + rank
                cell = f":py:data:`{name}`" if name in present else ""
                if _plural(name) in present:
                    cell += f" / ``{_plural(name)}``"
                lines.append(f"     - {cell}")
        lines.append("")
        return lines


def setup(app):
    app.add_directive("api-reference", ApiReference)
    return {"parallel_read_safe": True}
