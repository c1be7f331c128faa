/* The element-wise work of an LSTM step and of the memory's signals, forward and backward, over the k rows of a
 * minibatch's step: the compiled half of `neural_stack_arrays.py`, which makes the matrix products (numpy's BLAS)
 * and calls these between them. One pass over a row does what numpy does in some twenty operations, each a call
 * with its own cost at these sizes (a few microseconds for 10 x 1,024 floats).
 *
 * Layouts are numpy's: row-major float32, a row's stride given where rows are not packed. No two arrays
 * overlap (`restrict`: the loops vectorise without run-time checks).
 * tanh is computed here (`tanh_f`, below) so that gcc vectorises the loops: libm's tanhf is a scalar call.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

/* exp(x) for x <= 0, Cephes' expf polynomial after the reduction x = n ln 2 + r: within 2 ulp, written without
 * branches or calls so that loops over it vectorise (fmaxf and floorf would not, for their treatment of NaN and
 * rounding modes, nor a float clamp feeding the conversion to int): n is x / ln 2 rounded by truncating
 * x / ln 2 - 1/2, which x <= 0 allows, then kept at least -126 as an int (below, 2^n would not be a normal
 * float; the result there is garbage, which `tanh_f` does not use). */
static inline float exp_f(float x)
{
    int32_t m = (int32_t)(x * 1.44269504088896341f - 0.5f);
    m = m > -126 ? m : -126;
    float n = (float)m;
    float r = x - n * 0.693359375f;
    r = r + n * 2.12194440e-4f;
    float r2 = r * r;
    float y = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r
                + 1.6666665459e-1f) * r + 5.0000001201e-1f) * r2 + r + 1.0f;
    int32_t bits = (m + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);                  /* 2^n */
    return y * scale;
}

/* tanh, Cephes' tanhf: an odd polynomial below |x| = 0.625, (1 - e) / (1 + e) with e = exp(-2|x|) up to 9, 1
 * beyond (tanh(9) rounds to 1 in float); all computed and one kept, which vectorises. Within a few ulp of libm's;
 * NaN stays NaN. */
static inline float tanh_f(float x)
{
    float ax = fabsf(x), z = x * x;
    float small = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z
                    + 1.33314422036e-1f) * z - 3.33332819422e-1f) * z * x + x;
    float e = exp_f(-2.0f * ax);
    float large = ax >= 9.0f ? 1.0f : (1.0f - e) / (1.0f + e);
    return ax < 0.625f ? small : copysignf(large, x);
}

/* x[r] = tanh(x[r] + bias) over k rows of n, then the first `n_logistic` columns turned into logistics,
 * sigma(a) = (1 + tanh(a / 2)) / 2: their pre-activations arrive halved (`_halved`). bias: one row, or one per row
 * of x (bias_stride n). */
void activate(int k, int n, float *restrict x, const float *restrict bias, int bias_stride, int n_logistic)
{
    for (int r = 0; r < k; r++) {
        float *xr = x + (int64_t)r * n;
        const float *br = bias + (int64_t)r * bias_stride;
        for (int j = 0; j < n; j++)
            xr[j] = tanh_f(xr[j] + br[j]);
        for (int j = 0; j < n_logistic; j++)
            xr[j] = 0.5f * xr[j] + 0.5f;
    }
}

/* g[r] *= the nonlinearities' derivative at their outputs y[r]: y (1 - y) for the first `n_logistic` columns
 * (logistics), 1 - y^2 for the rest (tanh). k rows of n. */
void activate_backward(int k, int n, const float *restrict y, float *restrict g, int n_logistic)
{
    for (int r = 0; r < k; r++) {
        const float *yr = y + (int64_t)r * n;
        float *gr = g + (int64_t)r * n;
        for (int j = 0; j < n_logistic; j++)
            gr[j] *= yr[j] - yr[j] * yr[j];
        for (int j = n_logistic; j < n; j++)
            gr[j] *= 1.0f - yr[j] * yr[j];
    }
}

/* An LSTM layer's step after its gates' product: act (k, 4h) holds the pre-activations [i, f, o, g] (those of i, f,
 * o halved); adds the bias, takes the nonlinearities in place, then c = f c_prev + i g, tanh(c), h = o tanh(c).
 * c_prev, c, tanh_c, h: (k, h); c_prev NULL at the first step (zeros). */
void cell_forward(int k, int h, float *restrict act, const float *restrict bias, int bias_stride,
                  const float *restrict c_prev, float *restrict c, float *restrict tanh_c, float *restrict h_out)
{
    activate(k, 4 * h, act, bias, bias_stride, 3 * h);
    for (int r = 0; r < k; r++) {
        const float *a = act + (int64_t)r * 4 * h;
        const float *i = a, *f = a + h, *o = a + 2 * h, *g = a + 3 * h;
        float *cr = c + (int64_t)r * h, *tr = tanh_c + (int64_t)r * h, *hr = h_out + (int64_t)r * h;
        if (c_prev) {
            const float *cp = c_prev + (int64_t)r * h;
            for (int j = 0; j < h; j++)
                cr[j] = f[j] * cp[j] + i[j] * g[j];
        } else {
            for (int j = 0; j < h; j++)
                cr[j] = i[j] * g[j];
        }
        for (int j = 0; j < h; j++) {
            tr[j] = tanh_f(cr[j]);
            hr[j] = o[j] * tr[j];
        }
    }
}

/* Its backward step: given g_above (k rows, stride `above_stride`), the gradient of h from above (the memory's
 * signals, the output, or the layer above), gh (k, h), that from the next step's gates, and gc (k, h), that of c
 * from the next step, writes g_act (k, 4h), the gradient of the gates' pre-activations (before the halving), and
 * replaces gc by that of c_prev. act: the gates after their nonlinearities; c_prev NULL at the first step, when
 * `zeros` (h floats, 0) stand for it. */
void cell_backward(int k, int h, const float *restrict act, const float *restrict tanh_c,
                   const float *restrict c_prev, const float *restrict g_above, int above_stride,
                   const float *restrict gh, float *restrict gc, float *restrict g_act, const float *restrict zeros)
{
    for (int r = 0; r < k; r++) {
        const float *a = act + (int64_t)r * 4 * h;
        const float *i = a, *f = a + h, *o = a + 2 * h, *g = a + 3 * h;
        const float *tr = tanh_c + (int64_t)r * h, *ga = g_above + (int64_t)r * above_stride;
        const float *ghr = gh + (int64_t)r * h;
        const float *cp = c_prev ? c_prev + (int64_t)r * h : zeros;
        float *gcr = gc + (int64_t)r * h, *out = g_act + (int64_t)r * 4 * h;
        float *g_i = out, *g_f = out + h, *g_o = out + 2 * h, *g_g = out + 3 * h;
        for (int j = 0; j < h; j++) {
            float g_h = ga[j] + ghr[j];
            float g_c = (1.0f - tr[j] * tr[j]) * o[j] * g_h + gcr[j];
            g_i[j] = g_c * g[j] * (i[j] - i[j] * i[j]);
            g_f[j] = g_c * cp[j] * (f[j] - f[j] * f[j]);
            g_o[j] = g_h * tr[j] * (o[j] - o[j] * o[j]);
            g_g[j] = g_c * i[j] * (1.0f - g[j] * g[j]);
            gcr[j] = g_c * f[j];
        }
    }
}
