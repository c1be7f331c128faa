/* UORO over a minibatch of the NSPDA (nspda2, nspda3), every pass of every sequence in one call: the arithmetic of
 * `stackparse.models.arrays.NSPDAArrays` (step, refine, jvp, vjp, loss) and of `stackparse.training.gradients.uoro`
 * (`uoro_update`, the estimate's accumulation), which the tests hold it to. Python draws every random number
 * beforehand, in the order the numpy mirror draws them (ν of each pass, eq. 6's read values of each step), so the two
 * paths see the same numbers; they differ only in the order of the sums (a few units in the last place).
 *
 * Layouts (doubles unless said; B sequences sorted longest first, d = N + R, R = I + 2 read neurons):
 *   theta: W^s (N, P) and W^a (1, P) row-major, b^s (N), b^a (1), V (O, H), c (O), as the step uses them (rounded);
 *   the gradient (p) in DyNet's order: W^s column-major, b^s, W^a, b^a, V column-major, c;
 *   P^t = f1 (x) f2 (x) f3 flattened, f1's index fastest: order 3 [s, x, r]; order 2 with pairing read-input
 *   [s, [r; x]], with pairing state-read [[s; r], x] (f3 = 1);
 *   h = s (readout state) or s (x) r (readout state-read, s fastest);
 *   inputs, targets (T, B) int64; mask (T, B); hinted (T, B) uint8; lengths (B) int64;
 *   state (B, d) in and out; stack symbols (B, capacity) int64, bottom first, depth (B) int64, in and out;
 *   nu (passes, B, d): pass q = t K + k of row b at [q, b]; codes (T, 3, R): step t's off, on, gone values.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#define EMPTY (-1)
#define UP 0.13
#define DOWN (-0.09)

enum { I_B, I_N, I_IN, I_O, I_P, I_SIZE, I_ORDER, I_PAIRING, I_QUANTIZE, I_PAPER, I_READOUT, I_REFINE, I_CAP,
       I_COUNT };
enum { P_WS, P_BS, P_WA, P_BA, P_V, P_C, P_INPUTS, P_TARGETS, P_MASK, P_HINTED, P_LENGTHS, P_STATE, P_SYMBOLS,
       P_DEPTH, P_NU, P_CODES, P_EPSILON, P_TOTAL, P_GRAD, P_S_TILDE, P_THETA_TILDE, P_WORK, P_COUNT };

static inline double sigmoid(double z) { return 1.0 / (1.0 + exp(-z)); }

static inline int read_id(int64_t top, int R) { return top == EMPTY ? R - 1 : (int)top; }

/* e(top) (eq. 6's code of a candidate top), plus the popped top's "gone" value where one is given and differs. */
static void code(double *out, const double *codes, int R, int64_t top, int64_t popped)
{
    const double *off = codes, *on = codes + R, *gone = codes + 2 * R;
    int id = read_id(top, R);
    for (int j = 0; j < R; j++)
        out[j] = off[j];
    out[id] = off[id] + (on[id] - off[id]);
    if (popped != EMPTY && popped != top) {
        int gid = read_id(popped, R);
        out[gid] = out[gid] + (gone[gid] - off[gid]);
    }
}

/* The flattened outer product f1 (x) f2 (x) f3, f1's index fastest. */
static void outer3(double *out, const double *f1, int k1, const double *f2, int k2, const double *f3, int k3)
{
    for (int c = 0; c < k3; c++)
        for (int b = 0; b < k2; b++) {
            double *row = out + (size_t)k1 * (b + (size_t)k2 * c);
            for (int a = 0; a < k1; a++)
                row[a] = (f1[a] * f2[b]) * f3[c];
        }
}

/* Σ u_i v_i in eight running sums: one sum is a chain of dependent additions, slow at these lengths (p in the
 * thousands); eight the compiler vectorises. The order differs from numpy's, by a few units in the last place. */
static double dot(const double *u, const double *v, size_t n)
{
    double sums[8] = {0.0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            sums[k] += u[i + k] * v[i + k];
    double sum = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]));
    for (; i < n; i++)
        sum += u[i] * v[i];
    return sum;
}

static double norm(const double *v, size_t n) { return sqrt(dot(v, v, n)); }

/* The whole minibatch: ints (I_COUNT), pointers (P_COUNT, addresses); adds the summed loss to *total and the
 * estimate to grad. s_tilde (B, d) and theta_tilde (B, p) start at zero; work holds p doubles. */
void nspda_uoro(const int64_t *ints, const uintptr_t *ptrs)
{
    const int B = (int)ints[I_B], N = (int)ints[I_N], I = (int)ints[I_IN], O = (int)ints[I_O];
    const int P = (int)ints[I_P], order = (int)ints[I_ORDER], state_read_pairing = (int)ints[I_PAIRING];
    const int quantize = (int)ints[I_QUANTIZE], paper = (int)ints[I_PAPER], read_readout = (int)ints[I_READOUT];
    const int K = (int)ints[I_REFINE], cap = (int)ints[I_CAP];
    const size_t p = (size_t)ints[I_SIZE];
    const int R = I + 2, d = N + R, H = read_readout ? N * R : N;
    const double *Ws = (const double *)ptrs[P_WS], *bs = (const double *)ptrs[P_BS];
    const double *Wa = (const double *)ptrs[P_WA], *ba = (const double *)ptrs[P_BA];
    const double *V = (const double *)ptrs[P_V], *c = (const double *)ptrs[P_C];
    const int64_t *inputs = (const int64_t *)ptrs[P_INPUTS], *targets = (const int64_t *)ptrs[P_TARGETS];
    const double *mask = (const double *)ptrs[P_MASK];
    const uint8_t *hinted = (const uint8_t *)ptrs[P_HINTED];
    const int64_t *lengths = (const int64_t *)ptrs[P_LENGTHS];
    double *states = (double *)ptrs[P_STATE];
    int64_t *symbols = (int64_t *)ptrs[P_SYMBOLS], *depths = (int64_t *)ptrs[P_DEPTH];
    const double *nus = (const double *)ptrs[P_NU], *codes = (const double *)ptrs[P_CODES];
    const double epsilon = *(const double *)ptrs[P_EPSILON];
    double *total = (double *)ptrs[P_TOTAL], *grad = (double *)ptrs[P_GRAD];
    double *s_tildes = (double *)ptrs[P_S_TILDE], *theta_tildes = (double *)ptrs[P_THETA_TILDE];

    /* a pass's vectors (small: on the stack), and ν^T ∂f/∂θ (p) in `work` */
    double f1[d], f2[d], f3[d], t1[d], t2[d], t3[d], next[d], forward[d], state_slope[N], read_slope[R];
    double push[R], pop[R], keep[R], product[P], dproduct[P], hidden[H], d_hidden[H], g[O];
    double *vjp = (double *)ptrs[P_WORK];
    const double one = 1.0;
    const size_t state_part = (size_t)(P + 1) * N;            /* W^s, b^s; then W^a, b^a; then V, c */
    const size_t readout_part = state_part + P + 1;

    for (int b = 0; b < B; b++) {
        double *state = states + (size_t)b * d, *s_tilde = s_tildes + (size_t)b * d;
        double *theta_tilde = theta_tildes + (size_t)b * p;
        int64_t *stack = symbols + (size_t)b * cap, *depth = depths + b;
        for (int t = 0; t < lengths[b]; t++) {
            const int64_t x = inputs[(size_t)t * B + b];
            for (int k = 0; k < K; k++) {
                const int refine = k < K - 1;
                const double *nu = nus + ((size_t)(t * K + k) * B + b) * d;
                const double *s = state, *r = state + N, *ts = s_tilde, *tr = s_tilde + N;
                /* P^t's factors and their tangents (x constant) */
                int k1, k2, k3;
                if (order == 3) {
                    k1 = N, k2 = I, k3 = R;
                    memcpy(f1, s, N * sizeof(double)), memcpy(t1, ts, N * sizeof(double));
                    for (int j = 0; j < I; j++)
                        f2[j] = j == x, t2[j] = 0.0;
                    memcpy(f3, r, R * sizeof(double)), memcpy(t3, tr, R * sizeof(double));
                } else if (!state_read_pairing) {
                    k1 = N, k2 = R + I, k3 = 1;
                    memcpy(f1, s, N * sizeof(double)), memcpy(t1, ts, N * sizeof(double));
                    memcpy(f2, r, R * sizeof(double)), memcpy(t2, tr, R * sizeof(double));
                    for (int j = 0; j < I; j++)
                        f2[R + j] = j == x, t2[R + j] = 0.0;
                    f3[0] = 1.0, t3[0] = 0.0;
                } else {
                    k1 = d, k2 = I, k3 = 1;
                    memcpy(f1, state, d * sizeof(double)), memcpy(t1, s_tilde, d * sizeof(double));
                    for (int j = 0; j < I; j++)
                        f2[j] = j == x, t2[j] = 0.0;
                    f3[0] = 1.0, t3[0] = 0.0;
                }
                outer3(product, f1, k1, f2, k2, f3, k3);
                /* dP by the product rule, the terms in the mirror's order (a constant factor's is zero) */
                outer3(dproduct, t1, k1, f2, k2, f3, k3);
                for (int q = 0; q < P; q++) {
                    const int i1 = q % k1, i2 = (q / k1) % k2, i3 = q / (k1 * k2);
                    dproduct[q] = dproduct[q] + (f1[i1] * t2[i2]) * f3[i3];
                    dproduct[q] = dproduct[q] + (f1[i1] * f2[i2]) * t3[i3];
                }
                /* eq. 1: s^t = g(W^s P^t + b^s); its jvp through the same rows */
                for (int j = 0; j < N; j++) {
                    const double *row = Ws + (size_t)j * P;
                    double z = bs[j] + dot(row, product, P), dz = dot(row, dproduct, P);
                    double y = sigmoid(z);
                    next[j] = quantize ? (double)(y > 0.5) : y;
                    state_slope[j] = y * (1.0 - y);
                    forward[j] = state_slope[j] * dz;
                }
                double action_slope = 0.0, a = 0.0;
                if (refine) {                                              /* r^t = r^{t-1}, the stack untouched */
                    memcpy(next + N, r, R * sizeof(double));
                    memcpy(forward + N, tr, R * sizeof(double));
                    for (int j = 0; j < R; j++)
                        read_slope[j] = 0.0;
                } else {
                    double A = ba[0] + dot(Wa, product, P), dA = dot(Wa, dproduct, P);
                    if (paper) {                                           /* eq. 7, cut as eq. 14 */
                        double f = 2.0 * sigmoid(A) - 1.0;
                        a = (double)(f > UP) - (double)(f < DOWN), action_slope = (1.0 - f * f) / 2.0;
                    } else {
                        double f = tanh(A);
                        a = (double)(f > 0.5) - (double)(f < -0.5), action_slope = 1.0 - f * f;
                    }
                    const double *step_codes = codes + (size_t)t * 3 * R;
                    int64_t top = *depth > 0 ? stack[*depth - 1] : EMPTY, below = *depth > 1 ? stack[*depth - 2] : EMPTY;
                    code(push, step_codes, R, x, EMPTY);
                    code(pop, step_codes, R, below, top);
                    code(keep, step_codes, R, top, EMPTY);
                    double c_push = a * (a + 1) / 2, c_pop = a * (a - 1) / 2, c_keep = 1 - a * a;
                    for (int j = 0; j < R; j++) {
                        next[N + j] = push[j] * c_push + pop[j] * c_pop + keep[j] * c_keep;
                        read_slope[j] = push[j] * (a + 0.5) + pop[j] * (a - 0.5) - keep[j] * (2 * a);
                        forward[N + j] = read_slope[j] * (action_slope * dA);
                    }
                    if (a == 1.0)
                        stack[*depth] = x;
                    *depth = *depth + (int64_t)a < 0 ? 0 : *depth + (int64_t)a;
                }
                /* ν^T ∂f/∂θ (W^s, b^s, W^a, b^a; the readout's columns stay zero) */
                const int held = refine && hinted[(size_t)t * B + b];
                if (held) {                                               /* the state kept: ∂f/∂s = 1, ∂f/∂θ = 0 */
                    memcpy(next, state, d * sizeof(double));
                    memcpy(forward, s_tilde, d * sizeof(double));
                    memset(vjp, 0, readout_part * sizeof(double));
                } else {
                    double g_action = 0.0;
                    for (int j = 0; j < R; j++)
                        g_action += nu[N + j] * read_slope[j];
                    g_action *= action_slope;
                    for (int q = 0; q < P; q++)
                        for (int j = 0; j < N; j++)
                            vjp[(size_t)q * N + j] = product[q] * (nu[j] * state_slope[j]);
                    for (int j = 0; j < N; j++)
                        vjp[(size_t)P * N + j] = nu[j] * state_slope[j];
                    for (int q = 0; q < P; q++)
                        vjp[state_part + q] = product[q] * g_action;
                    vjp[state_part + P] = g_action;
                }
                memcpy(state, next, d * sizeof(double));
                /* UORO's update (gradients.uoro_update) */
                double rho0 = sqrt((norm(theta_tilde, p) + epsilon) / (norm(forward, d) + epsilon));
                double rho1 = sqrt((norm(vjp, p) + epsilon) / (norm(nu, d) + epsilon));
                for (int j = 0; j < d; j++)
                    s_tilde[j] = rho0 * forward[j] + rho1 * nu[j];
                const double inv0 = 1.0 / rho0, inv1 = 1.0 / rho1;
                for (size_t q = 0; q < p; q++)
                    theta_tilde[q] = theta_tilde[q] * inv0 + vjp[q] * inv1;
                /* the loss where the pass is scored (a held pass is not) */
                const double weight = held ? 0.0 : mask[(size_t)t * B + b];
                if (weight == 0.0)
                    continue;
                const double *sn = state, *rn = state + N;
                if (read_readout)
                    outer3(hidden, sn, N, rn, R, &one, 1);
                else
                    memcpy(hidden, sn, N * sizeof(double));
                double top_score = -INFINITY;
                for (int o = 0; o < O; o++) {
                    double score = c[o];
                    for (int h = 0; h < H; h++)
                        score += V[(size_t)o * H + h] * hidden[h];
                    g[o] = score;
                    top_score = score > top_score ? score : top_score;
                }
                double sum = 0.0;
                for (int o = 0; o < O; o++)
                    g[o] -= top_score, sum += exp(g[o]);
                const double log_norm = log(sum);
                const int64_t y = targets[(size_t)t * B + b];
                *total += weight * (log_norm - g[y]);
                for (int o = 0; o < O; o++)
                    g[o] = exp(g[o] - log_norm);
                g[y] -= 1.0;
                for (int o = 0; o < O; o++)
                    g[o] *= weight;
                for (int h = 0; h < H; h++) {
                    double sum_h = 0.0;
                    for (int o = 0; o < O; o++)
                        sum_h += g[o] * V[(size_t)o * H + h];
                    d_hidden[h] = sum_h;
                    for (int o = 0; o < O; o++)
                        grad[readout_part + (size_t)h * O + o] += g[o] * hidden[h];
                }
                for (int o = 0; o < O; o++)
                    grad[readout_part + (size_t)H * O + o] += g[o];
                /* ∂ℓ/∂s · s̃, times θ̃ */
                double along = 0.0;
                if (read_readout) {
                    for (int i = 0; i < N; i++) {
                        double ds = 0.0;
                        for (int l = 0; l < R; l++)
                            ds += d_hidden[i + N * l] * rn[l];
                        along += ds * s_tilde[i];
                    }
                    for (int l = 0; l < R; l++) {
                        double dr = 0.0;
                        for (int i = 0; i < N; i++)
                            dr += d_hidden[i + N * l] * sn[i];
                        along += dr * s_tilde[N + l];
                    }
                } else
                    for (int i = 0; i < N; i++)
                        along += d_hidden[i] * s_tilde[i];
                for (size_t q = 0; q < p; q++)
                    grad[q] += along * theta_tilde[q];
            }
        }
    }
}
