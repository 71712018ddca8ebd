#include <dlfcn.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The thread count of the BLAS library that holds `routine`, when it is an OpenBLAS (scipy's
   symbols have the prefix scipy_): get and set, or NULL (looked up once, on first use). */
static int (*sympile_blas_get_threads)(void);
static void (*sympile_blas_set_threads)(int);
static int sympile_blas_threads_looked_up;

static void sympile_blas_look_up_threads(void *routine)
{
    static const char *const names[][2] = {
        {"scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"},
        {"openblas_get_num_threads", "openblas_set_num_threads"}};
    Dl_info info;
    void *library;
    sympile_blas_threads_looked_up = 1;
    /* The library that defines the routine, with what it links (the BLAS behind scipy's
       wrappers). RTLD_NOLOAD: it is loaded already; closing the handle leaves it loaded. */
    if (!dladdr(routine, &info) || info.dli_fname == NULL
            || (library = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD)) == NULL)
        return;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *get = dlsym(library, names[i][0]), *set = dlsym(library, names[i][1]);
        if (get != NULL && set != NULL) {
            *(void **)&sympile_blas_get_threads = get;
            *(void **)&sympile_blas_set_threads = set;
            break;
        }
    }
    dlclose(library);
}

/* Before a BLAS call of `work` multiply-adds: returns the OpenMP threads that split it
   (see sympile_blas_multiply), and sets *saved to the library's thread count that
   sympile_blas_threads_restore sets back after it, or 0 when that was not changed. The
   library runs on one thread below @minsize@ multiply-adds (config.blas_parallel_minsize),
   and above it too when OpenMP splits the call or has one thread: one pool of threads for
   the whole module, because the library's threads, spinning beside OpenMP's after their
   work, each wait for the core the other holds (a 784 x 500 SGD update took 8 ms instead
   of 0.1). Without
   OpenMP, or with a library whose threads cannot be set, the library decides above it. */
static int sympile_blas_threads_begin(void *routine, double work, int *saved)
{
    int split = 1, budget = 0;
    *saved = 0;
    if (!sympile_blas_threads_looked_up)
        sympile_blas_look_up_threads(routine);
    if (sympile_blas_get_threads == NULL)
        return 1;
#ifdef _OPENMP
    /* One OpenMP thread for the call (OMP_NUM_THREADS=1, or the thread governor's choice
       while other processes hold the other cores): the library gets one too. */
    budget = omp_get_max_threads();
    if (work >= @minsize@)
        split = budget;
#endif
    if (work < @minsize@ || split > 1 || budget == 1) {
        int threads = sympile_blas_get_threads();
        if (threads > 1) {
            sympile_blas_set_threads(1);
            *saved = threads;
        }
    }
    return split;
}

static void sympile_blas_threads_restore(int threads)
{
    if (threads)
        sympile_blas_set_threads(threads);
}
