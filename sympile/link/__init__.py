"""Backends that turn a rewritten FunctionGraph into something that runs."""
