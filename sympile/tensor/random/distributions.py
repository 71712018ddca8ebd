"""RandomStreams' distributions, as RandomDraw (op.py) and its C (random_c.py) see them."""

__all__ = ["DISTRIBUTIONS", "PVALS_TOLERANCE"]

# distribution -> (public method, parameters as (name, dtype, kind)); kind "element": a
# scalar or one value per sample (the sample's ndim); "vector": weights over categories;
# "scalar": one value; "rows": probabilities over the last axis (ndim 1, or the sample's).
DISTRIBUTIONS = {
    "uniform": ("uniform", ()),
    "normal": ("normal", ()),
    "truncated_normal": ("truncated_normal", ()),
    "binomial": ("binomial", (("n", "int64", "element"), ("p", "float64", "element"))),
    # binomial with n = 1 and one p: a word per sample, fixed-count (philox.py's bernoulli)
    "bernoulli": ("binomial", (("p", "float64", "scalar"),)),
    "poisson": ("poisson", (("lam", "float64", "element"),)),
    "integers": ("random_integers", (("low", "int64", "element"),
                                     ("high", "int64", "element"))),
    "categorical": ("choice", (("p", "float64", "vector"),)),
    "choice_uniform": ("choice", (("a", "int64", "scalar"),)),
    "choice_weighted": ("choice", (("p", "float64", "vector"),)),
    "permutation": ("permutation", (("n", "int64", "scalar"),)),
    "multinomial": ("multinomial", (("n", "int64", "element"), ("pvals", "float64", "rows"))),
}

# How far from 1 a row of multinomial probabilities may sum (float32 rows of a thousand
# entries are that far off).
PVALS_TOLERANCE = 1e-5
