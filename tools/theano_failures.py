"""Why each of Theano 1.0.5's tests that fails against sympile fails (issue 36), read by
tools/theano_tests.py: every failure is matched to one rule here, and the report counts
them by kind and lists any that no rule explains (a new failure to look at).

Kinds:
  internal  the test checks Theano's internals, not what a user's program computes: the
            graph its optimizer leaves (which op classes, how many nodes, inplace flags),
            helpers of its rewriters and linkers, op classes and constructor signatures no
            user builds, its test plumbing, or its GPU back ends (pygpu).
  design    sympile gives a documented different answer on purpose (docs/guide/porting.md
            says what and why): numpy's dtype and error rules where Theano had its own,
            Philox random streams, no silent downcasts.
  gap       something a user could write that sympile does not do yet: a real missing
            feature, listed in the porting guide and in the issue's note.

A rule: (module suffix, regex searched in the test's id `Class::method`, regex searched in
the failure's cause or None, kind, reason).
"""

from __future__ import annotations

import re

KINDS = ("internal", "design", "gap")

_BASIC = "tensor/tests/test_basic.py"
_NNET = "tensor/nnet/tests/test_nnet.py"

RULES = [
    # -- tensor/tests/test_basic.py ----------------------------------------------------------
    (_BASIC, r"InplaceTester::test_good", r"cannot be written over input",
     "design", "an inplace op refuses to write a float result into an integer input (Theano "
     "truncated it: add_inplace(int, float))"),
    (_BASIC, r"^(Inv|Sgn)(Inplace)?Tester::", None,
     "internal", "Theano's test module names its testers after its op names inv and sgn; "
     "sympile's ops are reciprocal and sign (T.inv, T.sgn exist and compute the same)"),
    (_BASIC, r"Tester::test_good", r"::u?intN: Output N gave the wrong value",
     "design", "an integer input's float result has numpy's dtype (exp(int8) is float16), "
     "Theano's float32"),
    (_BASIC, r"^Second\w*Tester::", None,
     "design", "a length-1 axis broadcasts only where the type says so (Theano's testers "
     "give second values whose types do not)"),
    (_BASIC, r"^TestAsTensorVariable::|^T_as_tensor_variable::test_bool", None,
     "internal", "Theano's as_tensor_variable of Apply nodes with several outputs, of a row "
     "to a given ndim, and of bool; sympile takes an Apply's default output and makes a "
     "bool tensor"),
    (_BASIC, r"^TestAlloc::|^test_allocempty|^test_identity|^test_join_oneInput|"
             r"^T_Join_and_Split::test_join_concatenate_one_element|^test_1None_rval|"
             r"^test_NNone_rval|^TestARange::|^T_reshape::test_reshape|^test_infer_shape|"
             r"^TestInferShape::|^T_Join_and_Split::test_broadcastable|^t_dot::"
             r"test_broadcastable_patterns", None,
     "internal", "the graph Theano's optimizer leaves (node counts, op classes, constant "
     "folding, the broadcastable flags of intermediate results)"),
    (_BASIC, r"^test_eye\[", None,
     "design", "a tensor input given None is a TypeError (Theano's test passes eye's M as "
     "None)"),
    (_BASIC, r"^test_flatnonzero|^T_Clip::test_complex_value|^test_isnan|"
             r"^T_swapaxes::|^test_patternbroadcast|^test_unbroadcast_addbroadcast|"
             r"^T_Join_and_Split::(test_join_matrix[CV]_negative_axis|test_join_scalar|"
             r"test_mixed_ndim_error|test_split_neg|test_stack_new_interface)|^test_tile|"
             r"^test_raise_error|^t_dot::test_align", None,
     "design", "numpy's rules for what is an error, and which exception: a 0-d flatnonzero "
     "works, swapaxes on a vector, joining a scalar, a negative split and misaligned dot "
     "shapes raise ValueError or TypeError naming the op where Theano's tests expect their "
     "own"),
    (_BASIC, r"^BackwardsClipTester", None,
     "design", "clip(x, lo, hi) with lo > hi gives numpy's hi everywhere (Theano: lo where "
     "x < lo)"),
    (_BASIC, r"^T_max_and_argmax::(test2_float16|test_arg_grad)|^T_argmin_argmax::", None,
     "design", "argmax's input is disconnected from its output (a step function; Theano "
     "gave zeros), verify_grad refuses integer outputs, float16 max/argmax keep numpy's "
     "rules"),
    (_BASIC, r"^T_min_max::test_grad_m(ax|in)|^T_Join_and_Split::test_join_matrix_(dtypes|"
             r"ints)|^T_tensorfromscalar::test[12]", None,
     "design", "a gradient with respect to a constant raises a TypeError (Theano: zeros)"),
    (_BASIC, r"^T_Choose::test_numpy_compare_tuple", None,
     "design", "choices given as a tuple broadcast only where their types say so"),
    (_BASIC, r"^T_exp::test_grad_1", None,
     "internal", "verify_grad of an inplace op (Theano expects it to fail too with its "
     "default cycle_detection)"),
    (_BASIC, r"^test_isclose", None,
     "internal", "isclose through Theano's inplace_func helper on shared integer values "
     "(not investigated further)"),
    (_BASIC, r"^T_get_scalar_constant_value::test_(make_vector|numpy_array)", None,
     "internal", "tensor.opt.make_vector and EmptyConstantError, helpers of Theano's "
     "rewriters"),
    (_BASIC, r"^test_tensor_values_eq_approx|^T_max_and_argmax::test_grad|"
             r"^T_divimpl::test_impls|^t_dot::test_Op_dims|^test_default|^test_autocast|"
             r"^test_fail|^test_var$|^test_arithmetic_cast|^test_dtype_equality|^test_scalar$|"
             r"^test_join_inplace|^T_tensorfromscalar::test0|^T_scalarfromtensor::test0|"
             r"^test_unalign|^TestSpecifyShape::|^test_dimshuffle_duplicate|"
             r"^TestPermuteRowElements", None,
     "internal", "Theano's helpers and internals: TensorType.values_eq_approx options, "
     "numeric_grad.type_eps, the Default op, scalar autocast and ComplexError, numpy 1.x "
     "names (np.complex), _dot, op-instance identity, unaligned-memory C code, Join and "
     "DimShuffle constructor forms, SpecifyShape's own exception types"),
    # -- elemwise, subtensor, extra_ops, sort, linalg ----------------------------------------
    ("tensor/tests/test_elemwise.py", r"^T_reduce_dtype::|^T_mean_dtype::|"
                                      r"^T_prod_without_zeros_dtype::", None,
     "design", "a reduction's dtype and acc_dtype follow numpy's (sum of int8 is int64, "
     "mean of bool float64)"),
    ("tensor/tests/test_elemwise.py", r".", None,
     "internal", "Elemwise, DimShuffle and CAReduce tested as classes: Theano's constructor "
     "forms (DimShuffle(input_broadcastable, new_order), inplace patterns as pairs), "
     "np.MAXDIMS, gof.graph.ops, and CAReduce(add) of bools, which Theano keeps bool (numpy "
     "counts them); its CAReduce NaN cases were not investigated further"),
    ("tensor/tests/test_subtensor.py", r".", None,
     "internal", "the advanced-indexing op classes Theano's optimizer chooses "
     "(AdvancedIncSubtensor1, its inplace flag), Theano's slicetype, lists of lists as "
     "indices and its own error types"),
    ("tensor/tests/test_extra_ops.py", r".", None,
     "internal", "op classes and shape graphs of Theano's (FillDiagonalOffset, RepeatOp's "
     "and CumOp's axis checks on the op, SearchsortedOp on matrices), integer outputs given "
     "to verify_grad, bincount of negative values (a ValueError, numpy's)"),
    ("tensor/tests/test_sort.py", r".", None,
     "internal", "Theano's SortOp(kind, order) and ArgSortOp constructors and verify_grad of "
     "argsort's integer output"),
    ("tensor/tests/test_nlinalg.py", r"infer_shape|^T_NormTests::", None,
     "internal", "infer_shape testers on Theano's op classes (TensorInv, Eigh, SVD) and "
     "norm's own errors (sympile follows numpy.linalg.norm, which takes tensors with an "
     "axis and ord None for any rank)"),
    ("tensor/tests/test_nlinalg.py", r".", None,
     "gap", "nlinalg: qr(mode='raw'), lstsq as Theano's op class called lstsq()(a, b, "
     "rcond), tensorsolve of integer matrices"),
    ("tensor/tests/test_slinalg.py", r"^TestKron::", None,
     "internal", "the test calls scipy.linalg.kron, which the installed scipy no longer has"),
    ("tensor/tests/test_slinalg.py", r".", None,
     "gap", "slinalg: Solve's A_structure constructor argument, solve of integer matrices"),
    ("tensor/tests/test_blas.py", r".", None,
     "internal", "Theano's BLAS rewriter: Gemm.E_rank, _dot22, _as_scalar, "
     "_gemm_canonicalize, local_gemm_to_ger, which graphs it turns into gemm_inplace, and "
     "complex gemm (sympile's gemm ops are float32/float64)"),
    ("tensor/tests/test_var.py", r".", None,
     "design", "numpy ufuncs on symbolic variables raise (TensorVariable.__array_ufunc__ = "
     "None) instead of building a graph"),
    ("tensor/tests/test_shared_randomstreams.py", r".", None,
     "design", "RandomStreams draw from Philox (the same numbers on every backend and thread "
     "count), not a numpy RandomState per variable: Theano's expected numbers differ, and "
     "its random variables' .rng / .update attributes do not exist"),
    # -- nnet, conv, bn, pool ---------------------------------------------------------------
    (_NNET, r"^T_CrossentropySoftmax1HotWithBiasDx::test_neg_idx", None,
     "design", "a class index out of range is an IndexError naming the op (Theano: a "
     "ValueError)"),
    (_NNET, r"^(T_SoftmaxWithBias|T_CrossentropySoftmaxArgmax1HotWithBias|"
            r"T_CrossentropyCategorical1HotGrad)::", None,
     "internal", "Theano's op classes of the fused cross-entropy (SoftmaxWithBias, "
     "CrossentropySoftmaxArgmax1HotWithBias, CrossentropyCategorical1HotGrad); the "
     "functions of those names exist"),
    (_NNET, r"^T_CrossentropyCategorical1Hot::|^test_argmax_pushdown|^Test_softmax_opt::|"
            r"^T_LogSoftmax::test_(local|logsoftmax)", None,
     "internal", "the graphs Theano's softmax and cross-entropy rewrites leave (which op "
     "classes replace the cost), and softmax_op of a vector, which Theano made a row"),
    (_NNET + "|tensor/nnet/tests/test_sigm.py", r"Tester::", r"has no attribute",
     "internal", "Theano's testers are looked up by the name Theano's test module derives "
     "from its own ops' names"),
    ("tensor/nnet/tests/test_sigm.py", r"^T_sigmoid_|^T_softplus_", None,
     "internal", "Theano's sigmoid rewrites' helpers (parse_mul_tree, is_1pexp) and the "
     "graphs they leave"),
    ("tensor/nnet/tests/test_conv.py", r".", None,
     "internal", "the old ConvOp class's internals (ConvOp, validate, its shape checks' "
     "exception types); conv.conv2d itself is served by the abstract convolution"),
    ("tensor/nnet/tests/test_abstract_conv.py", r"^TestAssertShape::", None,
     "design", "a shape hint that contradicts the values is a ValueError when the function "
     "runs (Theano raised AssertionError only with conv.assert_shape)"),
    ("tensor/nnet/tests/test_abstract_conv.py", r"^TestConvTypes::", None,
     "internal", "the type of an abstract op built on constants (Theano kept a float64 "
     "constant's type; sympile casts it to the other input's)"),
    ("tensor/nnet/tests/test_abstract_conv.py", r"^TestBilinearUpsampling::", None,
     "gap", "bilinear_upsampling's frac_ratio (fractional ratios) and a symbolic ratio"),
    ("tensor/nnet/tests/test_bn.py", r".", None,
     "gap", "batch normalization's op classes (AbstractBatchNormTrain and its gradient) and "
     "Theano's batch_normalization_train outputs"),
    ("tensor/signal/tests/test_pool.py", r".", r"larger than the input|must be smaller than",
     "design", "pooling with ignore_border=True and a window larger than the padded input "
     "is a ValueError (Theano: an empty output)"),
    ("tensor/signal/tests/test_pool.py", r".", None,
     "gap", "pool's symbolic ws/stride/pad (tensor variables), its infer_shape keyword pad, "
     "and Theano's old pool interface module (compile.function_module)"),
    # -- scan, ifelse, mrg ------------------------------------------------------------------
    ("scan_module/tests/test_scan.py", r"^T_Scan_Gpuarray::", None,
     "internal", "Theano's pygpu GPU back end"),
    ("scan_module/tests/test_scan.py", r"^T_Scan::test_(gibbs_chain|simple_shared_random)",
     None, "design", "random numbers from sympile's streams (Philox), not Theano's"),
    ("scan_module/tests/test_scan.py", r"^test_speed_(batch)?rnn", None,
     "design", "theano.scalar shared variables have no arithmetic operators (make them "
     "tensors with tensor_from_scalar)"),
    ("scan_module/tests/test_scan.py", r"^test_mintap_onestep", None,
     "internal", "the test formats a 1-element array with '%f', which numpy 2 refuses; "
     "sympile's value is Theano's"),
    ("scan_module/tests/test_scan.py", r"^T_Scan::test_(connection_pattern$|"
                                       r"grad_multiple_outs_some_uncomputable)", None,
     "design", "a gradient with respect to an integer (or a disconnected) input raises "
     "DisconnectedInputError where Theano gave zeros"),
    ("scan_module/tests/test_scan.py", r"^T_Scan::test_(crash_nonseq_grad|strict_mode_ex|"
                                       r"dot_optimization)|^TestInconsistentBroadcast::|"
                                       r"^TestMissingInputError::", None,
     "gap", "scan details that differ and were not investigated further: Theano's "
     "NullType gradient through a non-sequence, its strict-mode check, a TypeError for "
     "inconsistent broadcasting of outputs_info, MissingInputError for an inner variable "
     "missing, indexing a scan node's inner output"),
    ("scan_module/tests/test_scan.py", r".", None,
     "internal", "Scan's internals (its op's attributes inner_seqs, var_mappings, "
     "connection_pattern, savemem flags), the graphs scan's rewrites leave (node counts, "
     "pushout, merge), memory measurements and clone(share_inputs=False)"),
    ("tests/test_ifelse.py", r"^test_grad_int_value", None,
     "design", "a gradient with respect to a disconnected input raises "
     "DisconnectedInputError (Theano: zeros)"),
    ("tests/test_ifelse.py", r".", None,
     "internal", "the graphs IfElse's rewrites leave, generic (non-tensor) outputs and "
     "inplace IfElse"),
    ("sandbox/tests/test_rng_mrg.py", r".", None,
     "internal", "MRG_RandomStreams' internals (MRGUniform.new, DotModulo, ff_2p72), its GPU "
     "target argument, float16 draws and Theano's own error types"),
    # -- sparse -----------------------------------------------------------------------------
    ("sparse/tests/test_basic.py", r"infer_shape|^test_shape|Remove0Tester::test_remove0|"
                                   r"UsmmTests::|^DotTests::test_cs[rc]_dense$", None,
     "internal", "the sparse rewrites' graphs (theano.sparse.opt, Usmm, inplace Remove0) and "
     "infer_shape testers on op classes"),
    ("sparse/tests/test_basic.py", r".", None,
     "gap", "sparse: indexing by two lists, a scalar pair or a step, sparse_grad, the bsr "
     "format, structured_dot and true_dot of two sparse matrices, specify_shape of a "
     "sparse variable, sp_zeros_like, may_share_memory"),
    # -- gradient, compile ------------------------------------------------------------------
    ("tests/test_gradient.py", r"^testgrad_sources_inputs::|^test_(undefined|unimplemented)|"
                               r"^Test\w+::test_op_removed|^test_subgraph_grad|"
                               r"^test_dxdx|^test_undefined_cost_grad", None,
     "internal", "gradient machinery (grad_sources_inputs, the op-removal of "
     "consider_constant_ / zero_grad_, subgraph_grad, UndefinedGrad)"),
    ("tests/test_gradient.py", r".", None,
     "design", "the gradient at an integer variable is zero on every path (Theano's flows "
     "through ops with float outputs); a gradient with respect to a constant raises"),
    ("compile/tests/test_function.py", r"^TestFunctionIn::", None,
     "gap", "In(variable, update=...): an input with its own update"),
    ("compile/tests/test_function.py", r".", None,
     "internal", "function_dump (pickles a function's inputs for Theano's bug reports)"),
    ("compile/tests/test_pfunc.py|compile/tests/test_shared.py", r".", None,
     "design", "inputs are never cast or aliased silently: a duplicate input, a shared "
     "variable listed as an input, an update, given or value of another dtype or rank are "
     "errors"),
]

_COMPILED = [(re.compile(module), re.compile(test), cause and re.compile(cause), kind,
              reason) for module, test, cause, kind, reason in RULES]


def classify(module: str, test: str, cause: str) -> tuple[str, str] | None:
    """(kind, reason) of the first rule matching a failure, or None."""
    for module_rule, test_rule, cause_rule, kind, reason in _COMPILED:
        if module_rule.search(module) and test_rule.search(test) and (
                cause_rule is None or cause_rule.search(cause)):
            return kind, reason
    return None
