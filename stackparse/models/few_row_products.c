/* x W for a few rows of x (a minibatch's step: 1 to 12 rows) and a large fixed W, on processors with AVX2 and FMA
 * but without AVX-512: the step products of `neural_stack_arrays.py` (`_Product`), which OpenBLAS does at about half
 * the arithmetic's speed there (its Haswell kernels; BENCHMARKS.md, "Which processor").
 *
 * Why it is faster: W is packed once per minibatch in strips of eight columns, each strip's K rows of eight floats
 * one after the other (`packed_product`'s P), so a strip streams through the cache in order; x's rows are copied
 * transposed (scratch: K floats per row), so that the eight floats of a k sit in one cache line, not in rows
 * a page apart that compete for the same cache set; and a block of R rows by S strips keeps its R S sums in
 * registers through all of K: at ten rows one load of W feeds ten FMAs. Each column's sum runs over k in order,
 * one product at a time (no reassociation: -ffast-math is not among the flags).
 *
 * Where AVX-512 is there, OpenBLAS's own kernels measured fast enough on these products (BENCHMARKS.md) and this
 * one is not compiled in: `few_row_products_available` writes 0, and `_Product` keeps to numpy.
 */
#include <stddef.h>
#include <stdint.h>

#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#include <immintrin.h>

#define MOST_ROWS 12
/* Rows by strips of one block: R S accumulators, S loads of W and R broadcasts of x for every k; at most 12
 * accumulators, with S enough for eight independent sums (an FMA's latency of four cycles, two issued a cycle). */
#define BLOCK(R, S)                                                                                                   \
static void block_##R##_##S(int K, int N, int strip, const float *xt, const float *P, float *out, int ldo)          \
{                                                                                                                     \
    __m256 sum[R * S];                                                                                                \
    _Pragma("GCC unroll 12") for (int a = 0; a < R * S; a++) sum[a] = _mm256_setzero_ps();                           \
    const float *p = P + (size_t)strip * K * 8;                                                                       \
    for (int k = 0; k < K; k++) {                                                                                     \
        __m256 w[S];                                                                                                  \
        _Pragma("GCC unroll 8") for (int s = 0; s < S; s++) w[s] = _mm256_loadu_ps(p + ((size_t)s * K + k) * 8);     \
        _Pragma("GCC unroll 12") for (int i = 0; i < R; i++) {                                                        \
            __m256 b = _mm256_broadcast_ss(xt + (size_t)k * R + i);                                                   \
            _Pragma("GCC unroll 8") for (int s = 0; s < S; s++) sum[i * S + s] = _mm256_fmadd_ps(b, w[s], sum[i * S + s]); \
        }                                                                                                             \
    }                                                                                                                 \
    /* every loop over the sums unrolled: an indexed one would keep them in memory, stored at every k */              \
    _Pragma("GCC unroll 8") for (int s = 0; s < S; s++) {                                                            \
        int j = (strip + s) * 8;                                                                                      \
        if (j + 8 <= N) {                                                                                             \
            _Pragma("GCC unroll 12") for (int i = 0; i < R; i++) _mm256_storeu_ps(out + (size_t)i * ldo + j, sum[i * S + s]); \
        } else {                                                                                                      \
            float last[8];                                                                                            \
            _Pragma("GCC unroll 12") for (int i = 0; i < R; i++) {                                                    \
                _mm256_storeu_ps(last, sum[i * S + s]);                                                               \
                for (int c = 0; j + c < N; c++) out[(size_t)i * ldo + j + c] = last[c];                               \
            }                                                                                                         \
        }                                                                                                             \
    }                                                                                                                 \
}
BLOCK(12, 1) BLOCK(11, 1) BLOCK(10, 1) BLOCK(9, 1) BLOCK(8, 1) BLOCK(7, 1) BLOCK(6, 2) BLOCK(5, 2) BLOCK(4, 3)
BLOCK(3, 4) BLOCK(2, 6) BLOCK(1, 8) BLOCK(6, 1) BLOCK(5, 1) BLOCK(4, 1) BLOCK(3, 1) BLOCK(2, 1) BLOCK(1, 1)

/* The strips S at a time, the last ones one at a time. */
#define STRIPS(R, S)                                                                                                  \
    for (; strip + S <= strips; strip += S) block_##R##_##S(K, N, strip, scratch, P, o, ldo);                         \
    for (; strip < strips; strip++) block_##R##_1(K, N, strip, scratch, P, o, ldo);                                   \
    break;

void few_row_products_available(int *yes) { *yes = 1; }

/* out (M, N; rows `ldo` floats apart) = x (M, K; rows `ldx` apart) W, W (K, N) packed in strips of eight columns:
 * P[(s K + k) 8 + c] = W[k, 8 s + c], zero past column N. scratch: K MOST_ROWS floats. */
void packed_product(int M, int K, int N, const float *x, int ldx, const float *P, float *out, int ldo, float *scratch)
{
    int strips = (N + 7) / 8;
    for (int first = 0; first < M; first += MOST_ROWS) {
        int rows = M - first < MOST_ROWS ? M - first : MOST_ROWS, strip = 0;
        for (int k = 0; k < K; k++)
            for (int i = 0; i < rows; i++)
                scratch[(size_t)k * rows + i] = x[(size_t)(first + i) * ldx + k];
        float *o = out + (size_t)first * ldo;
        switch (rows) {
        case 12: STRIPS(12, 1) case 11: STRIPS(11, 1) case 10: STRIPS(10, 1) case 9: STRIPS(9, 1)
        case 8: STRIPS(8, 1) case 7: STRIPS(7, 1) case 6: STRIPS(6, 2) case 5: STRIPS(5, 2)
        case 4: STRIPS(4, 3) case 3: STRIPS(3, 4) case 2: STRIPS(2, 6) default: STRIPS(1, 8)
        }
    }
}
#else
void few_row_products_available(int *yes) { *yes = 0; }

void packed_product(int M, int K, int N, const float *x, int ldx, const float *P, float *out, int ldo, float *scratch)
{
}
#endif
