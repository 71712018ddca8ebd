"""The `config-flags` directive: a table of sympile.config's flags (name, default, what it
does) from the flags' own definitions, so that the page cannot fall behind the code."""

from docutils import nodes
from docutils.parsers.rst import Directive


class ConfigFlags(Directive):
    def run(self):
        from sympile.config import _FLAGS

        table = nodes.table()
        group = nodes.tgroup(cols=3)
        table += group
        for width in (25, 15, 60):
            group += nodes.colspec(colwidth=width)
        head, body = nodes.thead(), nodes.tbody()
        group += head
        group += body
        head += self._row(["flag", "default", "what it does"])
        for name, (default, _, description) in _FLAGS.items():
            body += self._row([name, repr(default), description], literal_first=True)
        return [table]

    @staticmethod
    def _row(cells, literal_first=False):
        row = nodes.row()
        for index, text in enumerate(cells):
            entry = nodes.entry()
            paragraph = nodes.paragraph()
            paragraph += nodes.literal(text=text) if literal_first and index < 2 else \
                nodes.Text(text)
            entry += paragraph
            row += entry
        return row


def setup(app):
    app.add_directive("config-flags", ConfigFlags)
    return {"parallel_read_safe": True}
