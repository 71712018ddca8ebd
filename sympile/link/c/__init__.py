"""The C backend: whole-graph C code generation, the compiler driver and module cache."""
