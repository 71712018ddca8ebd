"""The C code of the random ops: node bodies that read the inputs and call the samplers of
philox.h and random_draws.c (RandomDraw) or mrg.h (MRGUniform, MultinomialFromUniform,
ChoiceFromUniform).

The samplers run under OpenMP above config.openmp_elemwise_minsize elements (a sixteenth of
it for the per-element samplers, whose elements cost more); their results do not depend on
the number of threads (see philox.py and mrg.py).
"""

from __future__ import annotations

from sympile.config import config
from sympile.graph.basic import Apply
from sympile.graph.ccode import C_TYPES, NPY_TYPES, CCode, CNames, c_file, c_string, render
from sympile.scalar.c_fastmath import FAST_MATH_SUPPORT
from sympile.tensor.c_toolkit import vectorized_kernel_attribute
from sympile.tensor.random.distributions import DISTRIBUTIONS, PVALS_TOLERANCE

__all__ = ["PHILOX_CORE", "random_draw_c_code", "mrg_uniform_c_code",
           "multinomial_from_uniform_c_code", "choice_from_uniform_c_code",
           "check_parameter_c_code", "RANDOM_SUPPORT", "MRG_STEP", "MRG_SUPPORT"]

_COMMON = c_file(__file__, "random_common.h")
# The fixed-count samplers' chunk kernels are vectorised like the elementwise loops (and
# compiled for this machine's widest vectors, sympile.cpu.vector_target).
PHILOX_CORE = c_file(__file__, "philox_core.h")
RANDOM_SUPPORT = (FAST_MATH_SUPPORT, _COMMON, PHILOX_CORE,
                  render(c_file(__file__, "philox.h"),
                         {"kernel": vectorized_kernel_attribute(compute_bound=True)}),
                  c_file(__file__, "random_draws.c"))
MRG_STEP = c_file(__file__, "mrg_step.h")
MRG_SUPPORT = (_COMMON, MRG_STEP, c_file(__file__, "mrg.h"))

# What each distribution's sampler writes (the output is cast from it when its dtype
# differs) and whether its elements cost more than a few operations.
_WORK = {"uniform": None, "normal": None, "bernoulli": None, "truncated_normal": "float64",
         "binomial": "int64", "poisson": "int64", "integers": "int64",
         "categorical": "int64", "choice_uniform": "int64", "choice_weighted": "int64",
         "permutation": "int64", "multinomial": "int64"}


def _threaded(count: str, expensive: bool) -> str:
    if not config.openmp:
        return "0"
    minimum = config.openmp_elemwise_minsize // (16 if expensive else 1)
    return f"({count} >= {max(minimum, 1)})"


def _sampler_call(op, parameters: list[str], steps: list[str], target: str) -> str:
    """The C statement that fills `target` (a C array of the work dtype) and sets status."""
    distribution, dtype = op.distribution, op.dtype
    if distribution in ("uniform", "normal"):
        work = dtype if dtype in ("float32", "float64") else "float64"
        return (f"sympile_philox_{distribution}_{work}(key, (npy_{work} *){target}, count, "
                f"0.0, {_threaded('count', False)});")
    if distribution == "bernoulli":
        ctype = C_TYPES[dtype]
        return (f"status = sympile_random_check_p({parameters[0]}, label); if (status == 0) "
                f"sympile_philox_bernoulli_{ctype}(key, ({ctype} *){target}, count, "
                f"*(npy_float64 *)PyArray_DATA({parameters[0]}), "
                f"{_threaded('count', False)});")
    specs = DISTRIBUTIONS[distribution][1]
    data = [f"((const npy_{spec[1]} *)PyArray_DATA({parameter}))"
            for parameter, spec in zip(parameters, specs)]
    # Each parameter as (its data, its step), then the end of the call.
    arguments = [f"{pointer}, {step}" for pointer, step in zip(data, steps)]
    threaded = _threaded("count", True)
    out = f"(npy_{_WORK[distribution]} *){target}"
    if distribution == "truncated_normal":
        call = f"sympile_draw_truncated_normal(key, {out}, count, {threaded}, label)"
    elif distribution in ("binomial", "poisson", "integers"):
        call = (f"sympile_draw_{distribution}(key, {out}, count, {', '.join(arguments)}, "
                f"{threaded}, label)")
    elif distribution == "categorical":
        call = (f"sympile_draw_categorical(key, {out}, count, {data[0]}, "
                f"PyArray_SIZE({parameters[0]}), {threaded}, label)")
    elif distribution == "choice_uniform":
        call = f"sympile_draw_choice(key, {out}, count, {data[0]}[0], NULL, label)"
    elif distribution == "choice_weighted":
        call = (f"sympile_draw_choice(key, {out}, count, PyArray_SIZE({parameters[0]}), "
                f"{data[0]}, label)")
    elif distribution == "permutation":
        call = f"sympile_draw_permutation(key, {out}, count, {data[0]}[0], {threaded}, label)"
    else:
        call = (f"sympile_draw_multinomial(key, {out}, count, categories, "
                f"{', '.join(arguments)}, {PVALS_TOLERANCE}, {threaded}, label)")
    return f"status = {call};"


def random_draw_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """RandomDraw's C: see the module docstring."""
    dtype = op.dtype
    if dtype not in C_TYPES:
        return None
    state, size, *inputs = names.inputs
    new_state, sample = names.outputs
    specs = DISTRIBUTIONS[op.distribution][1]
    work = _WORK[op.distribution] or (dtype if dtype in ("float32", "float64") else "float64")
    direct = work == dtype or op.distribution == "bernoulli"
    size_length = op.size_length
    parameters = [f"parameter_{index}" for index in range(len(inputs))]
    steps = [f"step_{index}" for index in range(len(inputs))]
    conversions = []
    for index, (variable, (name, param_dtype, kind)) in enumerate(zip(inputs, specs)):
        if kind == "rows":
            conversions.append(
                f"if (status == 0) {{ {parameters[index]} = sympile_random_rows({variable}, "
                f"{size_length}, dims, &categories, &{steps[index]}, label); "
                f"status = {parameters[index]} == NULL ? -1 : 0; }}")
        elif kind in ("vector", "scalar"):
            conversions.append(
                f"if (status == 0) {{ {parameters[index]} = (PyArrayObject *)PyArray_FROMANY("
                f"(PyObject *){variable}, {NPY_TYPES[param_dtype]}, 0, 0, NPY_ARRAY_CARRAY_RO); "
                f"status = {parameters[index]} == NULL ? -1 : 0; }}")
        else:
            ndim = size_length
            conversions.append(
                f"if (status == 0) {{ {parameters[index]} = sympile_random_parameter("
                f"{variable}, {NPY_TYPES[param_dtype]}, {ndim}, dims, &{steps[index]}, label, "
                f"\"{name}\"); status = {parameters[index]} == NULL ? -1 : 0; }}")
    extra_axis = ""
    if op.distribution == "permutation":
        extra_axis = (f"if (status == 0) {{ dims[{size_length}] = (npy_intp)*(npy_int64 *)"
                      f"PyArray_DATA({parameters[0]}); if (dims[{size_length}] < 0) {{ "
                      f"PyErr_Format(PyExc_ValueError, \"%s: n must be >= 0, got %ld\", label, "
                      f"(long)dims[{size_length}]); status = -1; }} }}")
    elif op.distribution == "multinomial":
        extra_axis = f"if (status == 0) {{ dims[{size_length}] = categories; }}"
    declarations = "\n".join(f"PyArrayObject *{p} = NULL; npy_intp {s} = 0;"
                             for p, s in zip(parameters, steps))
    releases = " ".join(f"Py_XDECREF({p});" for p in parameters)
    target = f"PyArray_DATA({sample})" if direct else "PyArray_DATA(work)"
    work_array = "" if direct else (
        f"if (status == 0) {{ work = (PyArrayObject *)PyArray_SimpleNew({op.ndim}, dims, "
        f"{NPY_TYPES[work]}); status = work == NULL ? -1 : 0; }}")
    cast_back = "" if direct else (
        f"if (status == 0 && PyArray_CopyInto({sample}, work) < 0) {{ status = -1; }}")
    body = f"""
const char *label = "{op.label}";
sympile_philox_key key;
npy_uint64 calls = 0;
npy_intp dims[{max(op.ndim, 1)}];
npy_int64 count = 0;
npy_intp categories = 0;
int status = 0;
PyArrayObject *work = NULL;
{declarations}
(void)categories;
status = sympile_random_key({state}, &key, &calls, label);
if (status == 0) {{ status = sympile_random_size({size}, {size_length}, dims, &count, label); }}
{chr(10).join(conversions)}
{extra_axis}
if (status == 0) {{
    status = sympile_prepare_output(&{sample}, {op.ndim}, dims, {NPY_TYPES[dtype]});
}}
{work_array}
if (status == 0) {{ {_sampler_call(op, parameters, steps, target)} }}
{cast_back}
{releases}
Py_XDECREF(work);
if (status != 0 || sympile_random_next_state(&{new_state}, key, calls) != 0) {{
    {names.fail}
}}
"""
    return CCode(body=body, support=RANDOM_SUPPORT, openmp=config.openmp)


def mrg_uniform_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """MRGUniform's C: the state copied into the new state, which the streams advance."""
    (state, size), (new_state, sample) = names.inputs, names.outputs
    label = "MRG_RandomStreams.uniform"
    body = f"""
const char *label = "{label}";
npy_intp dims[{max(op.ndim, 1)}];
npy_int64 count = 0;
if (sympile_random_size({size}, {op.ndim}, dims, &count, label) != 0) {{
    {names.fail}
}}
if (count > 2147483647LL) {{
    PyErr_Format(PyExc_ValueError, "%s: at most 2**31 - 1 samples at once, got %lld", label,
                 (long long)count);
    {names.fail}
}}
if (PyArray_NDIM({state}) != 2 || PyArray_DIM({state}, 1) != 6 || PyArray_DIM({state}, 0) == 0) {{
    PyErr_Format(PyExc_ValueError, "%s: the state must have shape (n_streams, 6)", label);
    {names.fail}
}}
if (sympile_prepare_output(&{new_state}, 2, PyArray_DIMS({state}), NPY_INT32) != 0
        || PyArray_CopyInto({new_state}, {state}) < 0
        || sympile_prepare_output(&{sample}, {op.ndim}, dims, {NPY_TYPES[op.dtype]}) != 0) {{
    {names.fail}
}}
sympile_mrg_uniform_{op.dtype}((npy_int32 *)PyArray_DATA({new_state}), PyArray_DIM({state}, 0),
                               (npy_{op.dtype} *)PyArray_DATA({sample}), count,
                               {_threaded("count", False)});
"""
    return CCode(body=body, support=MRG_SUPPORT, openmp=config.openmp)


def _from_uniform_body(op, names: CNames, kind: str) -> str:
    (pvals, uniforms, n), (output,) = names.inputs, names.outputs
    label = f"MRG_RandomStreams.{'multinomial' if kind == 'multinomial' else 'choice'}"
    return f"""
if (sympile_from_uniform({pvals}, {uniforms}, {n}, {int(kind == "multinomial")},
                         {NPY_TYPES[op.dtype]}, &{output}, {c_string(label)}) != 0) {{
    {names.fail}
}}
"""


def multinomial_from_uniform_c_code(op, node: Apply, names: CNames) -> CCode | None:
    if op.dtype not in C_TYPES:
        return None
    return CCode(body=_from_uniform_body(op, names, "multinomial"), support=MRG_SUPPORT)


def choice_from_uniform_c_code(op, node: Apply, names: CNames) -> CCode | None:
    if op.dtype not in C_TYPES:
        return None
    return CCode(body=_from_uniform_body(op, names, "choice"), support=MRG_SUPPORT)


def check_parameter_c_code(op, node: Apply, names: CNames) -> CCode | None:
    """CheckParameter's C: the output is a new reference to x once the condition holds."""
    (x, condition), (output,) = names.inputs, names.outputs
    return CCode(body=f"""
PyObject *holds = PyArray_GETITEM({condition}, PyArray_DATA({condition}));
const int truth = holds == NULL ? -1 : PyObject_IsTrue(holds);
Py_XDECREF(holds);
if (truth <= 0) {{
    if (truth == 0) {{
        PyErr_SetString(PyExc_ValueError, {c_string(op.message)});
    }}
    {names.fail}
}}
Py_INCREF({x});
if (sympile_assign_output(&{output}, {x}) != 0) {{
    {names.fail}
}}
""")
