"""Joulin & Mikolov's continuous stack and list: the vectorized updates against slow references
written straight from the equations, gradients against finite differences, hard actions against
discrete structures, and long sequences."""
import dynet as dy
import numpy as np
import pytest

from stackparse.memories.joulin_mikolov import (EMPTY, ListMemory, Signals, StackMemory, list_update,
                                                stack_update)

B, S = 3, 4          # batch elements, stacks (lists) per element


# ---- slow references, one position at a time ------------------------------------------------------
def stack_reference(s, a, v):
    """Eq. 4-5 for one stack: s (p,), a = (push, pop[, no-op]), v the pushed value -> (p+1,)."""
    old = lambda i: s[i] if 0 <= i < len(s) else EMPTY
    new = np.empty(len(s) + 1)
    for i in range(len(s) + 1):
        new[i] = a[0] * (v if i == 0 else old(i - 1)) + a[1] * old(i + 1)
        if len(a) == 3:
            new[i] += a[2] * old(i)
    return new


def list_reference(lst, head, a, v):
    """§4.2's list update for one list around `head`; positions outside `lst` are EMPTY.
    Returns the new list over positions -1..len(lst) (one more at each end) and its head."""
    old = lambda i: lst[i] if 0 <= i < len(lst) else EMPTY
    new = np.empty(len(lst) + 2)
    for j in range(len(lst) + 2):
        i = j - 1
        inserted = v if i == head else old(i + 1) if i < head else old(i)
        new[j] = a[1] * old(i - 1) + a[2] * old(i + 1) + a[0] * inserted
        if len(a) == 4:
            new[j] += a[3] * old(i)
    return new, head + 1


def random_actions(rng, n, hard=False):
    """(n, S, B) action probabilities, each column a distribution (one-hot when hard)."""
    if hard:
        return np.eye(n)[rng.integers(0, n, size=(S, B))].transpose(2, 0, 1)
    x = rng.random((n, S, B)) + 0.05
    return x / x.sum(axis=0)


def batched(x):
    return dy.inputTensor(x, batched=True)


def columns(x):
    """The (S, B) structures of a (rows, S, B) array, one 1-D array each."""
    return [(s, b) for s in range(x.shape[1]) for b in range(x.shape[2])]


# ---- the update equals the equations ---------------------------------------------------------------
@pytest.mark.parametrize("n_actions", [2, 3])
def test_stack_update_equals_the_reference_over_many_steps(rng, n_actions):
    memory, ref = StackMemory.empty(S, k=2), np.full((2, S, B), EMPTY)
    for _ in range(25):
        a, v = random_actions(rng, n_actions), rng.random((1, S, B))
        memory = memory.next(Signals(batched(a), batched(v)))
        ref = np.stack([np.stack([stack_reference(ref[:, s, b], a[:, s, b], v[0, s, b]) for b in range(B)], -1)
                        for s in range(S)], 1)
        assert np.allclose(memory.content.npvalue(), ref, atol=1e-6)
    assert np.allclose(memory.read().npvalue(), ref[:2], atol=1e-6)


@pytest.mark.parametrize("n_actions", [3, 4])
def test_list_update_equals_the_reference_over_many_steps(rng, n_actions):
    memory, ref, head = ListMemory.empty(S, k=2), np.full((3, S, B), EMPTY), 1
    for _ in range(25):
        a, v = random_actions(rng, n_actions), rng.random((1, S, B))
        memory = memory.next(Signals(batched(a), batched(v)))
        new = [[list_reference(ref[:, s, b], head, a[:, s, b], v[0, s, b]) for b in range(B)] for s in range(S)]
        ref, head = np.stack([np.stack([lst for lst, _ in row], -1) for row in new], 1), head + 1
        assert memory.head == head
        assert np.allclose(memory.content.npvalue(), ref, atol=1e-6)
    assert np.allclose(memory.read().npvalue(), ref[head - 1:head + 1], atol=1e-6)


# ---- gradients -------------------------------------------------------------------------------------
def finite_difference_check(rng, update, content0, n_actions):
    """DyNet's gradient of sum(w * update(...)) over 3 steps against central differences, for every
    entry of the initial content, of each step's actions and of each step's written values."""
    pc = dy.ParameterCollection()
    c0 = pc.add_parameters(content0.shape, init=content0)
    acts = [pc.add_parameters((n_actions, S), init=random_actions(rng, n_actions)[..., 0]) for _ in range(3)]
    vals = [pc.add_parameters((1, S), init=rng.random((1, S))) for _ in range(3)]
    weights = {}

    def loss():
        dy.renew_cg()
        x = dy.parameter(c0)
        for a, v in zip(acts, vals):
            x = update(x, dy.parameter(a), dy.parameter(v))
        shape = x.dim()[0]
        weights.setdefault(shape, rng.standard_normal(shape))
        return dy.sum_elems(dy.cmult(dy.inputTensor(weights[shape]), x))

    value = loss()
    value.backward()
    eps = 1e-2
    for p in [c0, *acts, *vals]:
        grad, base = p.grad_as_array().copy(), p.as_array().copy()
        for idx in np.ndindex(base.shape):
            shifted = []
            for sign in (1, -1):
                x = base.copy()
                x[idx] += sign * eps
                p.set_value(x)
                shifted.append(loss().value())
            p.set_value(base)
            assert (shifted[0] - shifted[1]) / (2 * eps) == pytest.approx(grad[idx], abs=2e-3, rel=2e-3)


def test_stack_update_gradients_match_finite_differences(rng):
    finite_difference_check(rng, stack_update, np.full((2, S), EMPTY) + rng.random((2, S)), 3)


def test_list_update_gradients_match_finite_differences(rng):
    def update(content, actions, written):
        return list_update(content, (content.dim()[0][0] - 1) // 2, actions, written)[0]
    finite_difference_check(rng, update, np.full((3, S), EMPTY) + rng.random((3, S)), 4)


# ---- hard actions: exactly a discrete stack and a discrete list ------------------------------------
class DiscreteStack:
    def __init__(self):
        self.items = []

    def apply(self, action, value):
        if action == "PUSH":
            self.items.insert(0, value)
        elif action == "POP" and self.items:
            self.items.pop(0)

    def read(self, k):
        return (self.items + [EMPTY] * k)[:k]


class DiscreteList:
    """Positions -inf..inf as a dict; the head moves, values stay (INSERT shifts the left part)."""
    def __init__(self):
        self.cells, self.head = {}, 0

    def apply(self, action, value):
        if action == "LEFT":
            self.head -= 1
        elif action == "RIGHT":
            self.head += 1
        elif action == "INSERT":
            self.cells = {(i - 1 if i <= self.head else i): v for i, v in self.cells.items()}
            self.cells[self.head] = value

    def read(self, k):
        return [self.cells.get(i, EMPTY) for i in range(self.head - k + 1, self.head + 1)]


@pytest.mark.parametrize("memory_class,discrete,names", [
    (StackMemory, DiscreteStack, ("PUSH", "POP", "NO-OP")),
    (ListMemory, DiscreteList, ("INSERT", "LEFT", "RIGHT", "NO-OP"))])
def test_hard_actions_behave_exactly_as_a_discrete_structure(rng, memory_class, discrete, names):
    memory, k = memory_class.empty(S, k=3), 3
    structures = [[discrete() for _ in range(B)] for _ in range(S)]
    for _ in range(120):
        a, v = random_actions(rng, len(names), hard=True), rng.random((1, S, B)).astype(np.float32)
        memory = memory.next(Signals(batched(a), batched(v)))
        for s, b in columns(v):
            structures[s][b].apply(names[int(a[:, s, b].argmax())], v[0, s, b])
        read = memory.read().npvalue()
        expected = np.array([[structures[s][b].read(k) for b in range(B)] for s in range(S)]).transpose(2, 0, 1)
        assert np.array_equal(read, expected.astype(np.float32))


# ---- long sequences --------------------------------------------------------------------------------
def test_300_pushes_then_300_pops_keep_everything_and_end_exactly_empty():
    push, pop = np.zeros((2, S, B)), np.zeros((2, S, B))
    push[0], pop[1] = 1, 1
    memory, pushed = StackMemory.empty(S, k=2), []
    for t in range(300):
        value = np.full((1, S, B), (t + 1) / 301, dtype=np.float32)
        memory, pushed = memory.next(Signals(batched(push), batched(value))), pushed + [value[0, 0, 0]]
    content = memory.content.npvalue()
    assert np.array_equal(content[:300, 0, 0], np.array(pushed[::-1]))      # nothing fell off the bottom
    for t in range(300):
        assert memory.read().npvalue()[0, 0, 0] == pushed[-1 - t]
        memory = memory.next(Signals(batched(pop), batched(np.zeros((1, S, B)))))
    assert np.all(memory.content.npvalue() == EMPTY)                         # no drift: exactly empty


def test_300_soft_steps_stay_bounded_and_trim_back_to_the_content(rng):
    memory, pop = StackMemory.empty(S, k=2), np.zeros((3, S, B))
    pop[1] = 1
    for t in range(300):
        a = random_actions(rng, 3) if t < 150 else pop                       # soft, then pop everything
        memory = memory.next(Signals(batched(a), batched(rng.random((1, S, B)))))
    values = memory.content.npvalue()
    assert values.shape[0] == 302 and np.all(np.isfinite(values))
    assert np.all(values >= EMPTY - 1e-6) and np.all(values <= 1 + 1e-6)    # convex mixtures of [-1, 1]
    trimmed = StackMemory.restore([dy.inputTensor(values, batched=True)], k=2)
    assert trimmed.content.dim()[0] == (2, S)                                # everything popped: EMPTY
    assert np.allclose(trimmed.content.npvalue(), EMPTY, atol=1e-6)


def test_restore_drops_only_empty_rows(rng):
    values = np.full((9, S, B), EMPTY)
    values[:3] = rng.random((3, S, B))
    stack = StackMemory.restore([dy.inputTensor(values, batched=True)], k=2)
    assert np.array_equal(stack.content.npvalue(), values[:3].astype(np.float32))
    values = np.full((9, S, B), EMPTY)                                       # a list: the head is row 4
    values[2, 0, 0], values[6, 1, 2] = 0.25, 0.5
    lst = ListMemory.restore([dy.inputTensor(values, batched=True)], k=2)
    assert lst.head == 2 and np.array_equal(lst.content.npvalue(), values[2:7].astype(np.float32))


def test_a_capacity_keeps_only_the_top_of_the_stack_and_the_middle_of_the_list(rng):
    values = rng.random((9, S, B))
    assert np.array_equal(StackMemory.restore([dy.inputTensor(values, batched=True)], k=2, capacity=3)
                          .content.npvalue(), values[:3].astype(np.float32))
    lst = ListMemory.restore([dy.inputTensor(values, batched=True)], k=2, capacity=2)
    assert lst.head == 2 and np.array_equal(lst.content.npvalue(), values[2:7].astype(np.float32))
