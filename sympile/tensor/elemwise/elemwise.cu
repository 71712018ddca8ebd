/* The prelude of sympile's CUDA kernels: the C types and macros the scalar ops' C
   (sympile/scalar/c_rules.py) uses, float16 storage converted to and from float32, and the
   grid's indices. NVRTC compiles it (__CUDACC_RTC__, with -default-device so that the
   scalar ops' static inline helpers become device functions); the C compiler compiles the
   same text for the CPU emulation, where the kernel is a plain function that a serial loop
   calls once per (block, thread) of the grid with blockIdx and threadIdx set. */
#ifdef __CUDACC_RTC__
#define SYMPILE_KERNEL extern "C" __global__
typedef unsigned char npy_bool;
typedef signed char npy_int8;
typedef short npy_int16;
typedef int npy_int32;
typedef long long npy_int64;
typedef unsigned char npy_uint8;
typedef unsigned short npy_uint16;
typedef unsigned int npy_uint32;
typedef unsigned long long npy_uint64;
typedef float npy_float32;
typedef double npy_float64;
typedef long long npy_intp;
#define NAN __int_as_float(0x7fc00000)
#define INFINITY __int_as_float(0x7f800000)
#define INT_MIN (-2147483647 - 1)
/* C99's quiet comparisons, which CUDA's C++ lacks (CUDA compares without raising flags). */
#define isless(a, b) ((a) < (b))
#define isgreater(a, b) ((a) > (b))
/* float16 <-> float32 with the conversion instructions: round to nearest even, as numpy. */
static inline npy_float32 sympile_half_to_float(npy_uint16 h)
{
    npy_float32 f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
static inline npy_uint16 sympile_float_to_half(npy_float32 f)
{
    npy_uint16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
#define SYMPILE_ERROR_OR(flag, code) atomicOr((flag), (code))
/* The GNU builtins of sympile/scalar/fastmath.h, as CUDA's own functions. */
#define __builtin_memcpy memcpy
#define __builtin_fmaf fmaf
#define __builtin_fma fma
#else
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#define SYMPILE_KERNEL static
typedef unsigned char npy_bool;
typedef int8_t npy_int8;
typedef int16_t npy_int16;
typedef int32_t npy_int32;
typedef int64_t npy_int64;
typedef uint8_t npy_uint8;
typedef uint16_t npy_uint16;
typedef uint32_t npy_uint32;
typedef uint64_t npy_uint64;
typedef float npy_float32;
typedef double npy_float64;
typedef int64_t npy_intp;
typedef struct { unsigned int x, y, z; } sympile_dim3;
static sympile_dim3 blockIdx, threadIdx, blockDim, gridDim;
static inline npy_float32 sympile_half_to_float(npy_uint16 h)
{
    _Float16 value;
    memcpy(&value, &h, sizeof h);
    return (npy_float32)value;
}
static inline npy_uint16 sympile_float_to_half(npy_float32 f)
{
    _Float16 value = (_Float16)f;
    npy_uint16 h;
    memcpy(&h, &value, sizeof h);
    return h;
}
#define SYMPILE_ERROR_OR(flag, code) (*(flag) |= (code))
#endif
#define NPY_MIN_INT32 (-2147483647 - 1)
#define NPY_MIN_INT64 (-9223372036854775807LL - 1)
/* The first element of this thread's grid-stride loop, and the loop's step. */
#define SYMPILE_GRID_START ((npy_int64)blockIdx.x * blockDim.x + threadIdx.x)
#define SYMPILE_GRID_STEP ((npy_int64)blockDim.x * gridDim.x)
