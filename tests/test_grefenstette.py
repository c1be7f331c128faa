"""Grefenstette et al.'s neural stack, queue and deque: the paper's hand-worked example (Figure 1a) and
the same kind of example for the queue and the deque, the vectorized updates against slow references
written straight from eq. 1-11, hard signals against discrete structures, and gradients against
finite differences."""
import dynet as dy
import numpy as np
import pytest

from stackparse.memories.grefenstette import (
    NeuralDeque,
    NeuralQueue,
    NeuralStack,
    Signals,
    Values,
)

B, M = 3, 4          # batch elements, value dimensions


def scalar(x):
    return dy.inputTensor(np.array([x]))


def one_hot(i, m=6):
    return np.eye(m)[i]


def run_example(memory, steps):
    """Apply `steps` (one tuple of (push, pop, value) per end) to an unbatched memory; returns the
    strengths and the reads after each step."""
    strengths, reads = [], []
    for step in steps:
        memory = memory.next([Signals(scalar(d), scalar(u), dy.inputTensor(v)) for d, u, v in step])
        strengths.append(memory.strengths.npvalue())
        reads.append([r.npvalue() for r in memory.read()])
    return strengths, reads


# ---- hand-worked examples --------------------------------------------------------------------------
def test_stack_reproduces_figure_1a():
    v1, v2, v3 = one_hot(0), one_hot(1), one_hot(2)
    strengths, reads = run_example(NeuralStack.empty(6), [[(0.8, 0.0, v1)], [(0.5, 0.1, v2)], [(0.9, 0.9, v3)]])
    for got, expected in zip(strengths, [[0.8], [0.7, 0.5], [0.3, 0.0, 0.9]]):
        assert np.allclose(got, expected, atol=1e-6)
    for (got,), expected in zip(reads, [0.8 * v1, 0.5 * v2 + 0.5 * v1, 0.9 * v3 + 0 * v2 + 0.1 * v1]):
        assert np.allclose(got, expected, atol=1e-6)


def test_queue_same_signals_pops_and_reads_the_front():
    # Pops start from v1 (the front): 0.1 leaves (0.7, 0.5), then 0.9 takes v1's 0.7 and 0.2 of v2.
    v1, v2, v3 = one_hot(0), one_hot(1), one_hot(2)
    strengths, reads = run_example(NeuralQueue.empty(6), [[(0.8, 0.0, v1)], [(0.5, 0.1, v2)], [(0.9, 0.9, v3)]])
    for got, expected in zip(strengths, [[0.8], [0.7, 0.5], [0.0, 0.3, 0.9]]):
        assert np.allclose(got, expected, atol=1e-6)
    for (got,), expected in zip(reads, [0.8 * v1, 0.7 * v1 + 0.3 * v2, 0 * v1 + 0.3 * v2 + 0.7 * v3]):
        assert np.allclose(got, expected, atol=1e-6)


def test_deque_pops_the_top_then_the_bottom_then_pushes_both_ends():
    # Top values a1..a3, bottom values b1..b3; rows bottom first: b3 b2 b1 a1 a2 a3 after step 3.
    a1, a2, a3, b1, b2, b3 = (one_hot(i) for i in range(6))
    steps = [[(0.8, 0.0, a1), (0.6, 0.0, b1)],
             [(0.5, 0.1, a2), (0.7, 0.5, b2)],      # top pop 0.1 from a1; bottom pop 0.5 from b1
             [(0.9, 0.9, a3), (0.2, 0.9, b3)]]      # top: a2 0.5 -> 0, a1 0.7 -> 0.3; bottom: b2, b1, a1 -> 0.2
    strengths, reads = run_example(NeuralDeque.empty(6), steps)
    for got, expected in zip(strengths, [[0.6, 0.8], [0.7, 0.1, 0.7, 0.5], [0.2, 0, 0, 0.2, 0, 0.9]]):
        assert np.allclose(got, expected, atol=1e-6)
    expected_reads = [(0.8 * a1 + 0.2 * b1, 0.6 * b1 + 0.4 * a1),
                      (0.5 * a2 + 0.5 * a1, 0.7 * b2 + 0.1 * b1 + 0.2 * a1),
                      (0.9 * a3 + 0.1 * a1, 0.2 * b3 + 0.2 * a1 + 0.6 * a3)]
    for got, expected in zip(reads, expected_reads):
        assert np.allclose(got, expected, atol=1e-6)


def test_empty_memories_read_zero():
    for memory in (NeuralStack.empty(M), NeuralQueue.empty(M), NeuralDeque.empty(M)):
        assert all(np.array_equal(r.npvalue(), np.zeros(M)) for r in memory.read())
        assert memory.tensors() == []


# ---- slow references, one position at a time, straight from the equations -------------------------
def pop_reference(s, u, from_top):
    """Eq. 2 / 4 / 7 / 8 (first case): traverse from one end, removing up to u of strength."""
    out = np.empty(len(s))
    for i in range(len(s)):
        beyond = sum(s[j] for j in (range(i + 1, len(s)) if from_top else range(i)))
        out[i] = max(0.0, s[i] - max(0.0, u - beyond))
    return out


def read_reference(V, s, from_top):
    """Eq. 3 / 5 / 10 / 11: V (n, m) rows, s (n,)."""
    r = np.zeros(V.shape[1])
    for i in range(len(s)):
        beyond = sum(s[j] for j in (range(i + 1, len(s)) if from_top else range(i)))
        r += min(s[i], max(0.0, 1 - beyond)) * V[i]
    return r


class Reference:
    """One memory of one batch element: rows V (n, m) and strengths s (n,), the bottom first."""

    def __init__(self, kind):
        self.kind, self.V, self.s = kind, np.zeros((0, M)), np.zeros(0)

    def step(self, signals):
        (d, u, v), *bottom = signals
        if self.kind == "deque":
            (d_bot, u_bot, v_bot), = bottom
            s_both = pop_reference(pop_reference(self.s, u, from_top=True), u_bot, from_top=False)   # eq. 7-8
            self.s = np.concatenate([[d_bot], s_both, [d]])                                           # eq. 9
            self.V = np.vstack([v_bot, self.V, v])                                                    # eq. 6
        else:
            self.s = np.append(pop_reference(self.s, u, from_top=self.kind == "stack"), d)            # eq. 2 / 4
            self.V = np.vstack([self.V, v])                                                           # eq. 1

    def reads(self):
        ends = {"stack": (True,), "queue": (False,), "deque": (True, False)}[self.kind]
        return [read_reference(self.V, self.s, end) for end in ends]


MEMORIES = {"stack": NeuralStack, "queue": NeuralQueue, "deque": NeuralDeque}


def random_signals(rng, ends, hard=False):
    """Per end: push (1, B), pop (1, B), value (M, B); 0/1 push and pop when hard."""
    draw = (lambda: rng.integers(0, 2, size=(1, B)).astype(float)) if hard else (lambda: rng.random((1, B)))
    return [(draw(), draw(), rng.standard_normal((M, B))) for _ in range(ends)]


def batched_signals(signals):
    return [Signals(*(dy.inputTensor(x, batched=True) for x in end)) for end in signals]


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_update_and_read_equal_the_equations_over_many_steps(rng, kind):
    memory, refs = MEMORIES[kind].empty(M), [Reference(kind) for _ in range(B)]
    for _ in range(20):
        signals = random_signals(rng, memory.ends)
        memory = memory.next(batched_signals(signals))
        for b, ref in enumerate(refs):
            ref.step([(d[0, b], u[0, b], v[:, b]) for d, u, v in signals])
        strengths, reads = memory.strengths.npvalue(), [r.npvalue() for r in memory.read()]
        values = memory.values.npvalue()
        for b, ref in enumerate(refs):
            assert np.allclose(strengths[:, b], ref.s, atol=1e-6)
            assert np.allclose(values[:, :, b], ref.V.T, atol=1e-6)
            for got, expected in zip(reads, ref.reads()):
                assert np.allclose(got[:, b], expected, atol=1e-6)


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_read_all_is_the_reads_concatenated(rng, kind):
    memory = MEMORIES[kind].empty(M)
    assert np.array_equal(memory.read_all().npvalue(), np.zeros(M * memory.ends))
    for _ in range(9):
        memory = memory.next(batched_signals(random_signals(rng, memory.ends)))
        together = np.concatenate([r.npvalue() for r in memory.read()])
        assert np.allclose(memory.read_all().npvalue(), together, atol=1e-6)


def test_values_kept_in_blocks_are_the_columns_pushed_and_few_blocks(rng):
    """Issue 19: V as blocks merged like a binary counter (no matrix copied at every push): pushes at random ends
    give the columns in order, sums against weights equal V w, and at most 2 log2(n) + 2 blocks are left."""
    columns = [rng.standard_normal((M, B)).astype(np.float32)]
    values = Values((dy.inputTensor(columns[0], batched=True),), (1,))
    for _ in range(99):
        column, at_top = rng.standard_normal((M, B)).astype(np.float32), bool(rng.integers(0, 2))
        values = values.push(dy.inputTensor(column, batched=True), at_top)
        columns = columns + [column] if at_top else [column] + columns
        n = len(columns)
        assert sum(values.widths) == n and len(values.blocks) <= 2 * np.log2(n) + 2
    V = np.stack(columns, axis=1)                                            # (M, n, B)
    assert np.array_equal(values.matrix().npvalue(), V)
    W = rng.random((len(columns), 2, B))
    expected = np.einsum("mnb,neb->meb", V, W)
    assert np.allclose(values.weighted_sums(dy.inputTensor(W, batched=True)).npvalue(), expected, atol=1e-5)


# ---- hard signals: exactly a discrete structure ----------------------------------------------------
def discrete_step(items, signals, kind):
    """A Python list, the bottom (front) first; pop before push, as the neural structures."""
    (d, u, v), *bottom = signals
    if u and items:
        items.pop(-1 if kind != "queue" else 0)
    if kind == "deque":
        (d_bot, u_bot, v_bot), = bottom
        if u_bot and items:
            items.pop(0)
        if d_bot:
            items.insert(0, v_bot)
    if d:
        items.append(v)


def discrete_reads(items, kind, m):
    ends = {"stack": (-1,), "queue": (0,), "deque": (-1, 0)}[kind]
    return [items[i] if items else np.zeros(m) for i in ends]


@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_hard_signals_behave_exactly_as_a_discrete_structure(rng, kind):
    memory, lists = MEMORIES[kind].empty(M), [[] for _ in range(B)]
    for _ in range(60):
        signals = random_signals(rng, MEMORIES[kind].ends, hard=True)
        signals = [(d, u, v.astype(np.float32)) for d, u, v in signals]
        memory = memory.next(batched_signals(signals))
        reads = [r.npvalue() for r in memory.read()]
        for b, items in enumerate(lists):
            discrete_step(items, [(d[0, b], u[0, b], v[:, b]) for d, u, v in signals], kind)
            for got, expected in zip(reads, discrete_reads(items, kind, M)):
                assert np.array_equal(got[:, b], expected)


def test_a_deque_used_from_the_top_only_is_a_stack(rng):
    stack, deque = NeuralStack.empty(M), NeuralDeque.empty(M)
    unused = Signals(dy.zeros((1,), batch_size=B), dy.zeros((1,), batch_size=B), dy.zeros((M,), batch_size=B))
    for _ in range(15):
        (signals,) = batched_signals(random_signals(rng, 1))
        stack, deque = stack.next([signals]), deque.next([signals, unused])
        assert np.allclose(stack.read()[0].npvalue(), deque.read()[0].npvalue(), atol=1e-6)


# ---- gradients -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["stack", "queue", "deque"])
def test_gradients_match_finite_differences(rng, kind):
    """DyNet's gradient of sum_t w_t . r_t over 4 steps against central differences along a random
    direction of every push, pop and value. Parameters enter the graph with dy.parameter
    (Parameters.expr() records no gradient)."""
    ends, steps = MEMORIES[kind].ends, 4
    pc = dy.ParameterCollection()
    params = [[pc.add_parameters((1,), init=np.array([rng.uniform(0.1, 0.9)])) for _ in range(2)]
              + [pc.add_parameters((M,), init=rng.standard_normal(M))] for _ in range(steps * ends)]
    weights = rng.standard_normal((steps, ends, M))

    def loss():
        dy.renew_cg()
        memory, terms = MEMORIES[kind].empty(M), []
        for t in range(steps):
            ps = params[t * ends:(t + 1) * ends]
            memory = memory.next([Signals(*(dy.parameter(p) for p in end)) for end in ps])
            terms += [dy.dot_product(dy.inputTensor(w), r) for w, r in zip(weights[t], memory.read())]
        return dy.esum(terms)

    def loss_at(p, x):
        p.set_value(x)
        return loss().value()

    loss().backward()
    eps = 1e-3
    for p in (p for end in params for p in end):
        grad, base = p.grad_as_array().copy(), p.as_array().copy()
        direction = rng.standard_normal(base.shape)          # a directional derivative per signal
        numeric = (loss_at(p, base + eps * direction) - loss_at(p, base - eps * direction)) / (2 * eps)
        p.set_value(base)
        assert numeric == pytest.approx(float(grad.reshape(-1) @ direction.reshape(-1)), abs=5e-3, rel=5e-3)
