from unittest import SkipTest  # noqa: F401 - nose's name
