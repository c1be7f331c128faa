/* One step of Grefenstette et al.'s neural stack, queue or deque over the k running rows of a minibatch, forward
 * (the pops, the pushes, the reads) and backward (their vector-Jacobian products): what the numpy mirror of the
 * neural-memory models (`stackparse.models.neural_stack_arrays`) calls once a step each way. The same arithmetic as
 * `stackparse.memories.grefenstette`, whose graph the mirror's tests hold it to.
 *
 * The memory of a row lives in preallocated arrays, one slot per push, a step's window of them [lo, hi) bottom
 * first (the deque's bottom pushes fill the slots downwards): values (R, m) per row, strengths s (R) per row and
 * step. Each step pops its ends in order (eq. 2, 4; the deque's 7, 8), from the top or the bottom:
 *     s_i <- max(0, s_i - max(0, u - sum_{j beyond i} s_j)),
 * pushes its ends' values with strength d (eq. 1, 6, 9), then reads each end (eq. 3, 5; 10, 11):
 *     w_i = min(s_i, max(0, 1 - sum_{j beyond i} s_j)),  r = sum_i w_i v_i,
 * "beyond" being above i for the top, below it for the bottom. The sums beyond are running sums walking in from
 * that end, in the order numpy's cumulative sum takes them. The derivatives keep DyNet's conventions at ties:
 * relu's derivative is 0 at 0, and min(a, b) = a - relu(a - b) sends a tie's gradient to a (the paper's
 * footnote 1).
 *
 * Ends: at most two, end e pops and reads from the top if bit e of `read_top`, pushes at the top if bit e of
 * `push_top`; at most one end pushes at each side. A row's signals are [d_0, u_0, d_1, u_1, v_0 (m), v_1 (m)]
 * (after their logistics and tanh), S floats.
 */
#include <stdint.h>
#include <string.h>

static inline float relu(float x) { return x > 0.0f ? x : 0.0f; }

/* Pop u from s[lo, hi) in place, from the top or the bottom. */
static void pop(float *s, int lo, int hi, float u, int from_top)
{
    float beyond = u;                        /* u - the strength beyond the position */
    if (from_top)
        for (int i = hi - 1; i >= lo; i--) {
            float less = beyond;
            beyond -= s[i];
            s[i] = relu(s[i] - relu(less));
        }
    else
        for (int i = lo; i < hi; i++) {
            float less = beyond;
            beyond -= s[i];
            s[i] = relu(s[i] - relu(less));
        }
}

/* Given g[lo, hi), the gradient of `pop`'s result, replace it by that of its input s (as it was before the pop) and
 * return that of u. q_i = -g_i [y_i > 0] [less_i > 0] is the gradient of less_i; s_j enters every less_i it is
 * beyond with the sign -1. */
static float pop_backward(float *g, const float *s, int lo, int hi, float u, int from_top, float *q)
{
    float beyond = u, g_u = 0.0f, reach = 0.0f;
    int step = from_top ? -1 : 1, first = from_top ? hi - 1 : lo;
    for (int n = 0, i = first; n < hi - lo; n++, i += step) {
        float less = beyond;
        beyond -= s[i];
        float y = s[i] - relu(less);
        g[i] = y > 0.0f ? g[i] : 0.0f;                  /* the gradient of y */
        q[i] = less > 0.0f ? -g[i] : 0.0f;
        g_u += q[i];
    }
    for (int n = 0, i = from_top ? lo : hi - 1; n < hi - lo; n++, i -= step) {   /* from the far end inwards */
        float qi = q[i];
        g[i] -= reach;
        reach += qi;
    }
    return g_u;
}

/* The read weights of s[lo, hi) from the top or the bottom into w[lo, hi). */
static void read_weights(const float *s, int lo, int hi, int from_top, float *w)
{
    float room = 1.0f;
    if (from_top)
        for (int i = hi - 1; i >= lo; i--) {
            float here = room;
            room -= s[i];
            w[i] = s[i] - relu(s[i] - relu(here));
        }
    else
        for (int i = lo; i < hi; i++) {
            float here = room;
            room -= s[i];
            w[i] = s[i] - relu(s[i] - relu(here));
        }
}

/* Add to g_s[lo, hi) the gradient of s through the read weights, given that of the weights: g_w_i for the
 * positions where it counts (computed here from the read's gradient g_r and the values), the rest untouched.
 * A capped weight (s_i above the room) is the room, whose gradient goes to the strengths beyond; an uncapped one
 * is s_i. */
static void read_backward(float *g_s, const float *s, int lo, int hi, int from_top, const float *values, int m,
                          const float *g_r, float *q)
{
    float room = 1.0f, reach = 0.0f;
    int step = from_top ? -1 : 1, first = from_top ? hi - 1 : lo;
    for (int n = 0, i = first; n < hi - lo; n++, i += step) {
        float here = room;
        room -= s[i];
        int capped = s[i] - relu(here) > 0.0f, room_positive = here > 0.0f;
        q[i] = 0.0f;
        if (capped && !room_positive)
            continue;                               /* w_i = 0 whatever s: no gradient */
        const float *v = values + (int64_t)i * m;
        float g_w = 0.0f;
        for (int j = 0; j < m; j++)
            g_w += g_r[j] * v[j];
        if (capped)
            q[i] = g_w;                             /* the room's gradient */
        else
            g_s[i] += g_w;
    }
    for (int n = 0, i = from_top ? lo : hi - 1; n < hi - lo; n++, i -= step) {
        float qi = q[i];
        g_s[i] -= reach;
        reach += qi;
    }
}

/* Forward: rows r < k. p (k, S): the signals; s_prev (B, R): the strengths after the previous step in its window
 * [lo_prev, hi_prev) (NULL at the first step); s (B, R): this step's, written in [lo, hi); values (B, R, m): the
 * pushed values written in their slots; read (k, ends m): the next step's reads, or NULL (the last step); history
 * (B, reads, R): each read's weights written at row `read_row` + e, or NULL. */
void memory_forward(int k, int ends, int read_top, int push_top, int m, int R, const float *p, int S,
                    const float *s_prev, int lo_prev, int hi_prev, float *s, int lo, int hi,
                    float *values, float *read, float *history, int reads, int read_row, float *scratch)
{
    for (int r = 0; r < k; r++) {
        const float *pr = p + (int64_t)r * S;
        float *sr = s + (int64_t)r * R, *vr = values + (int64_t)r * R * m;
        if (s_prev) {
            memcpy(sr + lo_prev, s_prev + (int64_t)r * R + lo_prev, sizeof(float) * (hi_prev - lo_prev));
            for (int e = 0; e < ends; e++)
                pop(sr, lo_prev, hi_prev, pr[2 * e + 1], (read_top >> e) & 1);
        }
        for (int e = 0; e < ends; e++) {
            int slot = (push_top >> e) & 1 ? hi - 1 : lo;
            sr[slot] = pr[2 * e];
            memcpy(vr + (int64_t)slot * m, pr + 2 * ends + e * m, sizeof(float) * m);
        }
        if (!read)
            continue;
        for (int e = 0; e < ends; e++) {
            float *w = history ? history + ((int64_t)r * reads + read_row + e) * R : scratch;
            read_weights(sr, lo, hi, (read_top >> e) & 1, w);
            float *out = read + (int64_t)r * ends * m + e * m;
            memset(out, 0, sizeof(float) * m);
            for (int i = lo; i < hi; i++) {
                if (w[i] == 0.0f)
                    continue;
                const float *v = vr + (int64_t)i * m;
                for (int j = 0; j < m; j++)
                    out[j] += w[i] * v[j];
            }
        }
    }
}

/* Backward, rows r < k. g_s (B, R): in, the gradient of this step's strengths in [lo, hi) (from the next step's
 * pops; zeros after the last); out, that of the previous step's in [lo_prev, hi_prev). g_read (k, ends m): the
 * gradient of the reads made after this step (NULL: none made); g_reads (B, reads, m): every read's gradient, this
 * step's written in; history (B, reads, R): every read's weights. Writes g_p (k, S), the gradient of the signals
 * (after their nonlinearities): the pushes' d_t, the pops' u_t, the values v_t. scratch: 2 R floats. */
void memory_backward(int k, int ends, int read_top, int push_top, int m, int R, const float *p, int S, float *g_p,
                     const float *s_prev, int lo_prev, int hi_prev, const float *s, int lo, int hi, float *g_s,
                     const float *values, const float *history, float *g_reads, int reads, int read_row,
                     const float *g_read, float *scratch)
{
    float *q = scratch, *middle = scratch + R;
    for (int r = 0; r < k; r++) {
        const float *pr = p + (int64_t)r * S, *sr = s + (int64_t)r * R, *vr = values + (int64_t)r * R * m;
        float *gpr = g_p + (int64_t)r * S, *gsr = g_s + (int64_t)r * R;
        float *gr_all = g_reads + (int64_t)r * reads * m;
        const float *hr = history + (int64_t)r * reads * R;
        if (g_read)                                               /* the reads (eq. 3, 5, 10-11) */
            for (int e = 0; e < ends; e++) {
                const float *g_r = g_read + (int64_t)r * ends * m + e * m;
                memcpy(gr_all + (int64_t)(read_row + e) * m, g_r, sizeof(float) * m);
                read_backward(gsr, sr, lo, hi, (read_top >> e) & 1, vr, m, g_r, q);
            }
        for (int e = 0; e < ends; e++) {                          /* the pushes: d_t, v_t */
            int slot = (push_top >> e) & 1 ? hi - 1 : lo;
            gpr[2 * e] = gsr[slot];
            float *g_v = gpr + 2 * ends + e * m;
            memset(g_v, 0, sizeof(float) * m);
            for (int t = read_row; t < reads; t++) {              /* v_t's weight in every read since */
                float w = hr[(int64_t)t * R + slot];
                if (w == 0.0f)
                    continue;
                const float *g = gr_all + (int64_t)t * m;
                for (int j = 0; j < m; j++)
                    g_v[j] += w * g[j];
            }
        }
        for (int e = 0; e < ends; e++)
            gpr[2 * e + 1] = 0.0f;
        if (!s_prev)
            continue;
        /* the pops in reverse order, each from the strengths it was given (the second's: after the first) */
        const float *before = s_prev + (int64_t)r * R;
        if (ends == 2) {
            memcpy(middle + lo_prev, before + lo_prev, sizeof(float) * (hi_prev - lo_prev));
            pop(middle, lo_prev, hi_prev, pr[1], read_top & 1);
            gpr[3] = pop_backward(gsr, middle, lo_prev, hi_prev, pr[3], (read_top >> 1) & 1, q);
        }
        gpr[1] = pop_backward(gsr, before, lo_prev, hi_prev, pr[1], read_top & 1, q);
    }
}
