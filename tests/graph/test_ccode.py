"""sympile.graph.ccode's c_string: text as a C string literal that holds exactly its UTF-8
bytes."""

from __future__ import annotations

import ctypes

from sympile.graph import ccode
from tests.link.c.utils import load_c_library, requires_compiler

C_STRINGS = ['plain', 'quote " and backslash \\', "newline\nand\ttab", "trigraph ??= ??/",
             "non-ASCII: € é 漢", "octal run \x01" + "7", "", "Elemwise{add,no_inplace}"]


@requires_compiler
def test_c_string_gives_the_utf8_bytes_in_c(tmp_path):
    """Each literal, compiled by the C compiler, holds exactly the text's UTF-8 bytes."""
    functions = "\n".join(f"const char *text_{i}(void) {{ return {ccode.c_string(text)}; }}"
                          for i, text in enumerate(C_STRINGS))
    library = load_c_library(tmp_path, "c_strings", functions)
    for i, text in enumerate(C_STRINGS):
        function = getattr(library, f"text_{i}")
        function.restype = ctypes.c_char_p
        assert function() == text.encode("utf-8")


def test_c_string_escapes():
    assert ccode.c_string('a"b') == '"a\\"b"'
    assert ccode.c_string("??=") == '"\\?\\?="'
    assert ccode.c_string("\x017") == '"\\0017"'
    assert ccode.c_string(3) == '"3"'
