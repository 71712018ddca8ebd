/* RandomDraw's C (after philox.h): reading the state, the size and the parameters, and one
   loop per distribution. Every sampler checks all its parameters before drawing anything
   and raises the error philox.py's reference raises (op.py's _draw), so a bad parameter
   fails the call on either backend. Each function returns 0, or -1 with an exception set. */

static int sympile_random_key(PyArrayObject *state, sympile_philox_key *key,
                              npy_uint64 *calls, const char *label)
{
    if (PyArray_NDIM(state) != 1 || PyArray_DIM(state, 0) != 2) {
        PyErr_Format(PyExc_ValueError, "%s: the state must hold 2 values [key, draws]", label);
        return -1;
    }
    const npy_uint64 key_value = *(npy_uint64 *)PyArray_GETPTR1(state, 0);
    *calls = *(npy_uint64 *)PyArray_GETPTR1(state, 1);
    key->k0 = (npy_uint32)key_value;
    key->k1 = (npy_uint32)(key_value >> 32);
    key->calls_lo = (npy_uint32)*calls;
    key->calls_hi = (npy_uint32)(*calls >> 32);
    return 0;
}

/* *new_state becomes [key, calls + 1]: the state after this draw. */
static int sympile_random_next_state(PyArrayObject **new_state, sympile_philox_key key,
                                     npy_uint64 calls)
{
    npy_intp two = 2;
    if (sympile_prepare_output(new_state, 1, &two, NPY_UINT64) != 0)
        return -1;
    npy_uint64 *next = (npy_uint64 *)PyArray_DATA(*new_state);
    next[0] = ((npy_uint64)key.k1 << 32) | key.k0;
    next[1] = calls + 1;
    return 0;
}

static int sympile_draw_binomial(sympile_philox_key key, npy_int64 *out, npy_int64 count,
                                 const npy_int64 *n, npy_intp n_step, const npy_float64 *p,
                                 npy_intp p_step, int threaded, const char *label)
{
    for (npy_int64 i = 0; i < count; ++i) {
        if (n[i * n_step] < 0) {
            PyErr_Format(PyExc_ValueError, "%s: n must be >= 0, got %lld", label,
                         (long long)n[i * n_step]);
            return -1;
        }
        if (!(p[i * p_step] >= 0.0 && p[i * p_step] <= 1.0)) {
            sympile_random_value_error(label, "p must be in [0, 1]", p[i * p_step]);
            return -1;
        }
    }
    if (sympile_random_count_fits(count, label) != 0)
        return -1;
    #pragma omp parallel for schedule(dynamic, 4096) if (threaded)
    for (npy_int64 i = 0; i < count; ++i) {
        npy_int64 draw = 0;
        out[i] = sympile_philox_binomial(key, i, &draw, n[i * n_step], p[i * p_step]);
    }
    return 0;
}

static int sympile_draw_poisson(sympile_philox_key key, npy_int64 *out, npy_int64 count,
                                const npy_float64 *lam, npy_intp lam_step, int threaded,
                                const char *label)
{
    for (npy_int64 i = 0; i < count; ++i) {
        if (!(lam[i * lam_step] >= 0.0 && lam[i * lam_step] < 1e15)) {
            sympile_random_value_error(label, "lam must be in [0, 1e15)", lam[i * lam_step]);
            return -1;
        }
    }
    if (sympile_random_count_fits(count, label) != 0)
        return -1;
    #pragma omp parallel for schedule(dynamic, 4096) if (threaded)
    for (npy_int64 i = 0; i < count; ++i)
        out[i] = sympile_philox_poisson(key, i, lam[i * lam_step]);
    return 0;
}

static int sympile_draw_integers(sympile_philox_key key, npy_int64 *out, npy_int64 count,
                                 const npy_int64 *low, npy_intp low_step,
                                 const npy_int64 *high, npy_intp high_step, int threaded,
                                 const char *label)
{
    for (npy_int64 i = 0; i < count; ++i) {
        if (low[i * low_step] > high[i * high_step]) {
            PyErr_Format(PyExc_ValueError, "%s: low must be <= high, got low=%lld > high=%lld",
                         label, (long long)low[i * low_step], (long long)high[i * high_step]);
            return -1;
        }
    }
    if (sympile_random_count_fits(count, label) != 0)
        return -1;
    #pragma omp parallel for schedule(dynamic, 1024) if (threaded)
    for (npy_int64 i = 0; i < count; ++i)
        out[i] = sympile_philox_integer(key, i, low[i * low_step], high[i * high_step]);
    return 0;
}

static int sympile_draw_truncated_normal(sympile_philox_key key, npy_float64 *out,
                                         npy_int64 count, int threaded, const char *label)
{
    if (sympile_random_count_fits(count, label) != 0)
        return -1;
    #pragma omp parallel for schedule(dynamic, 1024) if (threaded)
    for (npy_int64 i = 0; i < count; ++i)
        out[i] = sympile_philox_truncated_normal(key, i);
    return 0;
}

/* The weights of choice: finite, non-negative, summing to 1. */
static int sympile_random_check_weights(const npy_float64 *weights, npy_int64 length,
                                        const char *label)
{
    npy_float64 total = 0.0;
    int valid = length > 0;
    for (npy_int64 k = 0; k < length; ++k) {
        valid = valid && isfinite(weights[k]) && weights[k] >= 0.0;
        total += weights[k];
    }
    if (!valid || !(total > 0.0)) {
        PyErr_Format(PyExc_ValueError, "%s: p must be finite, non-negative and not all zero",
                     label);
        return -1;
    }
    if (fabs(total - 1.0) > 1e-6) {
        sympile_random_value_error(label, "p must sum to 1 (within 1e-6)", total);
        return -1;
    }
    return 0;
}

static int sympile_draw_categorical(sympile_philox_key key, npy_int64 *out, npy_int64 count,
                                    const npy_float64 *weights, npy_int64 length,
                                    int threaded, const char *label)
{
    if (sympile_random_check_weights(weights, length, label) != 0
            || sympile_random_count_fits(count, label) != 0)
        return -1;
    npy_float64 *running = (npy_float64 *)malloc(sizeof(npy_float64) * length);
    if (running == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    npy_float64 total = 0.0;
    for (npy_int64 k = 0; k < length; ++k) {
        total += weights[k];
        running[k] = total;
    }
    #pragma omp parallel for schedule(dynamic, 1024) if (threaded)
    for (npy_int64 i = 0; i < count; ++i) {
        npy_float64 ua, ub;
        sympile_philox_pair(key, i, 0, &ua, &ub);
        const npy_float64 target = ua * running[length - 1];
        /* The first entry above target (numpy.searchsorted, side='right'). */
        npy_int64 low = 0, high = length;
        while (low < high) {
            const npy_int64 middle = low + (high - low) / 2;
            if (running[middle] <= target)
                low = middle + 1;
            else
                high = middle;
        }
        out[i] = low < length ? low : length - 1;
    }
    free(running);
    return 0;
}

/* `count` distinct indices of range(a), or of the nonzero weights when weights is not
   NULL (philox.py's choice_without_replacement). */
static int sympile_draw_choice(sympile_philox_key key, npy_int64 *out, npy_int64 count,
                               npy_int64 a, const npy_float64 *weights, const char *label)
{
    if (weights == NULL) {
        if (count > a || a < 0) {
            PyErr_Format(PyExc_ValueError, "%s: cannot take %lld distinct values out of a=%lld "
                         "without replacement", label, (long long)count, (long long)a);
            return -1;
        }
    } else {
        if (sympile_random_check_weights(weights, a, label) != 0)
            return -1;
        npy_int64 nonzero = 0;
        for (npy_int64 k = 0; k < a; ++k)
            nonzero += weights[k] != 0.0;
        if (count > nonzero) {
            PyErr_Format(PyExc_ValueError, "%s: cannot take %lld distinct values without "
                         "replacement: p has %lld nonzero entries", label, (long long)count,
                         (long long)nonzero);
            return -1;
        }
    }
    npy_float64 *pool = (npy_float64 *)malloc(sizeof(npy_float64) * (a > 0 ? a : 1));
    if (pool == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (npy_int64 k = 0; k < a; ++k)
        pool[k] = weights == NULL ? (npy_float64)k : weights[k];
    for (npy_int64 t = 0; t < count; ++t) {
        npy_float64 ua, ub;
        sympile_philox_pair(key, 0, t, &ua, &ub);
        if (weights == NULL) {
            npy_int64 pick = t + (npy_int64)floor(ua * (npy_float64)(a - t));
            pick = pick < a - 1 ? pick : a - 1;
            const npy_float64 kept = pool[t];
            pool[t] = pool[pick];
            pool[pick] = kept;
            out[t] = (npy_int64)pool[t];
        } else {
            npy_float64 total = 0.0;
            for (npy_int64 k = 0; k < a; ++k)
                total += pool[k];
            const npy_float64 target = ua * total;
            npy_float64 running = 0.0;
            npy_int64 pick = a - 1;
            for (npy_int64 k = 0; k < a; ++k) {
                running += pool[k];
                if (running > target) {
                    pick = k;
                    break;
                }
            }
            out[t] = pick;
            pool[pick] = 0.0;
        }
    }
    free(pool);
    return 0;
}

static int sympile_draw_permutation(sympile_philox_key key, npy_int64 *out, npy_int64 rows,
                                    npy_int64 n, int threaded, const char *label)
{
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "%s: n must be >= 0, got %lld", label, (long long)n);
        return -1;
    }
    if (sympile_random_count_fits(rows, label) != 0)
        return -1;
    #pragma omp parallel for schedule(dynamic, 1024) if (threaded)
    for (npy_int64 row = 0; row < rows; ++row) {
        npy_int64 *line = out + row * n;
        for (npy_int64 k = 0; k < n; ++k)
            line[k] = k;
        for (npy_int64 t = n - 1; t > 0; --t) {
            npy_float64 ua, ub;
            sympile_philox_pair(key, row, n - 1 - t, &ua, &ub);
            npy_int64 pick = (npy_int64)floor(ua * (npy_float64)(t + 1));
            pick = pick < t ? pick : t;
            const npy_int64 kept = line[pick];
            line[pick] = line[t];
            line[t] = kept;
        }
    }
    return 0;
}

static int sympile_draw_multinomial(sympile_philox_key key, npy_int64 *out, npy_int64 rows,
                                    npy_int64 categories, const npy_int64 *n, npy_intp n_step,
                                    const npy_float64 *pvals, npy_intp pvals_step,
                                    npy_float64 tolerance, int threaded, const char *label)
{
    for (npy_int64 row = 0; row < rows; ++row) {
        const npy_float64 *line = pvals + row * pvals_step * categories;
        npy_float64 total = 0.0;
        int valid = 1;
        for (npy_int64 c = 0; c < categories; ++c) {
            valid = valid && line[c] >= 0.0;
            total += line[c];
        }
        if (!valid || !(fabs(total - 1.0) <= tolerance)) {
            sympile_random_value_error(
                label, "each row of pvals must be non-negative and sum to 1", total);
            return -1;
        }
        if (n[row * n_step] < 0) {
            PyErr_Format(PyExc_ValueError, "%s: n must be >= 0, got %lld", label,
                         (long long)n[row * n_step]);
            return -1;
        }
    }
    if (sympile_random_count_fits(rows, label) != 0)
        return -1;
    #pragma omp parallel for schedule(dynamic, 256) if (threaded)
    for (npy_int64 row = 0; row < rows; ++row) {
        const npy_float64 *line = pvals + row * pvals_step * categories;
        npy_int64 *counts = out + row * categories;
        npy_int64 left = n[row * n_step], draw = 0;
        npy_float64 mass_left = 1.0;
        for (npy_int64 c = 0; c + 1 < categories; ++c) {
            npy_float64 probability = 0.0;
            if (mass_left > 0.0) {
                probability = line[c] / mass_left;
                probability = probability < 0.0 ? 0.0 : (probability > 1.0 ? 1.0 : probability);
            }
            counts[c] = sympile_philox_binomial(key, row, &draw, left, probability);
            left -= counts[c];
            mass_left -= line[c];
        }
        if (categories > 0)
            counts[categories - 1] = left;
    }
    return 0;
}
