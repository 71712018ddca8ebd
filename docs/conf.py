"""Sphinx configuration: the pages are Markdown (MyST), the API reference comes from the
docstrings through autodoc. CI builds with warnings as errors (`.ci/run`)."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("_ext"))

project = "sympile"
copyright = "2026, the sympile developers"
author = "the sympile developers"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.viewcode", "config_flags",
              "api_reference"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext"]
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
# The Op contract's methods (architecture.md, The Op contract) are for op writers, not for
# users of the ops.
autodoc_default_options = {
    "members": True,
    "exclude-members": "make_node, perform, infer_shape, L_op, R_op, grad, c_code, "
                       "c_code_cache_version, c_support_code, connection_pattern, "
                       "numpy_function, do_constant_folding",
}
# Docstrings write code between single backquotes.
default_role = "code"
# Signatures as written; the reference is for users reading what to pass.
autodoc_typehints = "signature"

html_theme = "alabaster"
html_title = "sympile"
# Alabaster's 940 px page cut long code lines (calls and their comments scrolled out of
# sight): code wraps instead (_static/code.css).
html_static_path = ["_static"]
html_css_files = ["code.css"]
