"""The numpy mirror of the neural stack, queue and deque LSTMs' BPTT, and of the deep LSTM's
(`stackparse.models.neural_stack_arrays`), against DyNet's graph: the memory's compiled step (pops, pushes, reads)
and its gradients, the model's loss and every parameter's gradient, and the trainer's updates through it (RMSProp,
the embeddings' sparse rows included); DyNet's graph where the kernels cannot be compiled."""
import dynet as dy
import numpy as np
import pytest

from stackparse.memories import grefenstette as graph
from stackparse.memories import grefenstette_arrays as arrays
from stackparse.evaluation.sequence import score_examples
from stackparse.models import get_model_class
from stackparse.models import neural_stack_arrays
from stackparse.models.neural_stack_arrays import _Product
from stackparse.sequences import Example
from stackparse.training.methods import TruncatedBPTT, segment_losses
from stackparse.training.trainer import OPTIMIZERS

N_IN, N_OUT = 6, 5


MEMORIES = {"stack": ((True,), (True,)), "queue": ((False,), (True,)), "deque": ((True, False), (True, False))}
"""read_from_top, push_at_top of each memory."""


def memory_step(kind, s_prev, p, values, g_s=None, g_read=None, m=3):
    """The compiled memory's second step (t = 1 of T = 2) over rows whose first left strengths s_prev (B, slots of
    step 0) and values (B, slots, m); p (B, S): the signals. (strengths after the step in its window, the reads); with
    g_s and g_read, the gradients of those: then also (g_p, the gradient of s_prev)."""
    read_top, push_top = (arrays.end_bits(flags) for flags in MEMORIES[kind])
    ends, B = len(MEMORIES[kind][0]), len(p)
    bottoms = ends - sum(MEMORIES[kind][1])
    T, R = 2, 2 * ends
    window = [neural_stack_arrays.live_rows(T, t, ends, bottoms) for t in (0, 1)]
    f32 = lambda x: np.ascontiguousarray(x, dtype=np.float32)                   # noqa: E731
    strengths, memory = np.zeros((2, B, R), np.float32), np.zeros((B, R, m), np.float32)
    (lo0, hi0), (lo, hi) = window
    strengths[0, :, lo0:hi0], memory[:, lo0:hi0] = s_prev, values
    p, read, history = f32(p), np.zeros((B, ends * m), np.float32), np.zeros((B, T * ends, R), np.float32)
    at = lambda a: a.ctypes.data                                                 # noqa: E731
    kernels = arrays.kernels()
    kernels.memory_forward(B, ends, read_top, push_top, m, R, at(p), p.shape[1], at(strengths[0]), lo0, hi0,
                           at(strengths[1]), lo, hi, at(memory), at(read), at(history), T * ends, ends,
                           at(np.empty(R, np.float32)))
    if g_s is None:
        return strengths[1, :, lo:hi], read
    g_strengths, g_p = np.zeros((B, R), np.float32), np.zeros_like(p)
    g_strengths[:, lo:hi] = g_s
    kernels.memory_backward(B, ends, read_top, push_top, m, R, at(p), p.shape[1], at(g_p), at(strengths[0]), lo0,
                            hi0, at(strengths[1]), lo, hi, at(g_strengths), at(memory), at(history),
                            at(np.zeros((B, T * ends, m), np.float32)), T * ends, ends, at(f32(g_read)),
                            at(np.empty(2 * R, np.float32)))
    return strengths[1, :, lo:hi], read, g_p, g_strengths[:, lo0:hi0]


def at_ends(pushed: dict, middle) -> list:
    """[the bottom's push; middle; the top's push], those there are."""
    return ([pushed[False]] if False in pushed else []) + [middle] + ([pushed[True]] if True in pushed else [])


def signals_of(rng, kind, B, m=3):
    ends = len(MEMORIES[kind][0])
    return np.concatenate([rng.uniform(0.05, 0.95, (B, 2 * ends)), rng.uniform(-1, 1, (B, ends * m))], axis=1)


@pytest.mark.parametrize("kind", list(MEMORIES))
def test_the_compiled_memory_step_is_the_graphs(rng, kind):
    """Pops, pushes and reads of one step against `stackparse.memories.grefenstette`'s equations on DyNet."""
    B, m, (read_from_top, push_at_top) = 3, 3, MEMORIES[kind]
    ends = len(read_from_top)
    s_prev, values = rng.uniform(0, 0.6, (B, ends)), rng.normal(size=(B, ends, m))
    p = signals_of(rng, kind, B)
    s_new, read = memory_step(kind, s_prev, p, values)
    dy.renew_cg()
    middle = dy.inputTensor(s_prev.T.astype(np.float32), batched=True)
    for e, top in enumerate(read_from_top):
        middle = graph.pop(middle, dy.inputTensor(p[None, :, 2 * e + 1].astype(np.float32), batched=True), top)
    pushes = {top: p[:, 2 * e] for e, top in enumerate(push_at_top)}
    expected = np.concatenate(at_ends({top: x[:, None] for top, x in pushes.items()},
                                      middle.npvalue().T.reshape(B, -1)), axis=1)
    assert np.allclose(s_new, expected, atol=1e-6)
    pushed = {top: p[:, 2 * ends + e * m:2 * ends + (e + 1) * m] for e, top in enumerate(push_at_top)}
    column = np.concatenate(at_ends({top: x[:, None] for top, x in pushed.items()}, values), axis=1)  # (B, slots, m)
    s_graph = dy.inputTensor(expected.T.astype(np.float32), batched=True)
    for e, top in enumerate(read_from_top):
        weights = graph.read_weights(s_graph, top).npvalue().T.reshape(B, -1)
        assert np.allclose(read[:, e * m:(e + 1) * m], np.einsum("bn,bnm->bm", weights, column), atol=1e-5)


@pytest.mark.parametrize("kind", list(MEMORIES))
def test_the_compiled_memory_steps_gradients_match_finite_differences(rng, kind):
    B, m, ends = 3, 3, len(MEMORIES[kind][0])
    s_prev, values = rng.uniform(0, 0.6, (B, ends)), rng.normal(size=(B, ends, m))
    p = signals_of(rng, kind, B)
    s_new, read = memory_step(kind, s_prev, p, values)
    g_s, g_read = rng.normal(size=s_new.shape), rng.normal(size=read.shape)
    _, _, g_p, g_prev = memory_step(kind, s_prev, p, values, g_s, g_read)

    def loss(s_prev, p):
        s_new, read = memory_step(kind, s_prev, p, values)
        return (s_new * g_s).sum(1) + (read * g_read).sum(1)
    eps = 1e-3
    for x, gradient, other in ((s_prev, g_prev, p), (p, g_p, s_prev)):
        for i in range(x.shape[1]):
            d = np.zeros_like(x)
            d[:, i] = eps
            up, down = ((loss(x + sign * d, other) if x is s_prev else loss(other, x + sign * d)) for sign in (1, -1))
            assert np.allclose((up - down) / (2 * eps), gradient[:, i], atol=2e-3), i


def model_of(name, rng, **settings):
    cls = get_model_class(name)
    pc = dy.ParameterCollection()
    sizes = {"hidden": 8, "embedding": 5} if name == "deep-lstm" else {"hidden": 8, "memory_size": 6, "embedding": 5}
    model = cls(pc, cls.Config(**{**sizes, **settings}), N_IN, N_OUT)
    model.pc_alive = pc
    for p in pc.parameters_list():           # biases and V away from their zero start: every path has a slope
        p.set_value(p.as_array() + rng.normal(0, 0.3, p.shape()))
    return model, pc


def batch_of(rng, lengths=(5, 2, 7, 4)):
    """Sequences of different lengths (the padded steps of DyNet's batch), some steps not scored."""
    return [Example(tuple(rng.integers(0, N_IN, n)), tuple(rng.integers(0, N_OUT, n)),
                    tuple(bool(b) for b in rng.integers(0, 2, n) | (np.arange(n) == n - 1)), n)
            for n in lengths]


@pytest.mark.parametrize("name,settings", [
    ("neural-stack", {}), ("neural-queue", {}), ("neural-deque", {}),
    ("neural-stack", {"layers": 2, "learned_h0": False}),
    ("neural-deque", {"layers": 2, "embedding": 0}),
    ("neural-deque", {"bottom_push_offset": 0.0, "pop_bias": -1.0}),
    ("neural-deque", {"bottom_push_offset": -2.0, "bottom_pop_offset": 0.0}),
    ("neural-deque", {"top_pop_offset": 0.0, "bottom_pop_offset": -6.0}),
    ("deep-lstm", {}), ("deep-lstm", {"layers": 1, "learned_h0": False}),
    ("deep-lstm", {"layers": 3, "input_every_layer": True}), ("deep-lstm", {"embedding": 0})])
def test_loss_and_every_gradient_are_dynets(rng, name, settings):
    model, pc = model_of(name, rng, **settings)
    batch = batch_of(rng)
    (loss, _), = segment_losses(model, batch, 0)
    expected = loss.value() * len(batch)
    loss.backward()
    result = model.array_mirror().gradient(batch)
    assert result.loss == pytest.approx(expected, rel=1e-6)
    assert len(result.params) == len(pc.parameters_list())           # every trained parameter
    for p, g in zip(result.params, result.grads):
        reference = p.grad_as_array() * len(batch)
        assert g.shape == reference.shape, p.name()
        assert np.allclose(g, reference, rtol=1e-4, atol=1e-5 * np.abs(reference).max()), p.name()
    for table, ids, rows in result.lookups:
        reference = table.grad_as_array()
        assert set(ids) == set(np.nonzero(np.abs(reference).sum(1))[0]) | {0}    # padding (id 0) looked up too
        assert np.allclose(rows, reference[ids] * len(batch), atol=1e-5 * np.abs(reference).max() * len(batch))


@pytest.mark.parametrize("name", ["neural-stack", "neural-deque", "deep-lstm"])
def test_the_trainer_updates_through_the_mirror_as_through_the_graph(name):
    """Three RMSProp updates (sparse embedding rows, clipping) from the same start give the same parameters."""
    finals = []
    for mirror in (True, False):
        rng = np.random.default_rng(3)
        dy.reset_random_seed(3)
        model, pc = model_of(name, rng)
        optimizer = OPTIMIZERS["rmsprop"](pc, 0.01)
        optimizer.set_clip_threshold(1.0)
        method = TruncatedBPTT(0, mirror)
        for _ in range(3):
            for loss, _ in method.losses(model, batch_of(rng), rng):
                loss.value()
                loss.backward()
                optimizer.update()
        finals.append([p.as_array() for p in pc.parameters_list()] + [p.as_array() for p in pc.lookup_parameters_list()])
    for mirrored, graphed in zip(*finals):
        assert np.allclose(mirrored, graphed, atol=2e-5)


def test_without_the_mirror_or_with_cuts_the_graph_computes_the_loss(rng):
    model, _ = model_of("neural-stack", rng)
    batch = batch_of(rng)
    for method in (TruncatedBPTT(0, False), TruncatedBPTT(3, True)):
        assert all(isinstance(loss, dy.Expression) for loss, _ in method.losses(model, batch, rng))
    (loss, scored), = TruncatedBPTT(0, True).losses(model, batch, rng)
    assert not isinstance(loss, dy.Expression) and scored == sum(sum(e.scored) for e in batch)


def test_where_the_kernels_cannot_be_compiled_the_graph_trains_and_scores(rng, monkeypatch):
    monkeypatch.setattr(neural_stack_arrays, "_cell_kernels", lambda: None)
    model, _ = model_of("neural-stack", rng)
    assert model.array_mirror() is None
    batch = batch_of(rng)
    assert all(isinstance(loss, dy.Expression) for loss, _ in TruncatedBPTT(0, True).losses(model, batch, rng))
    assert len(score_examples(model, batch)) == len(batch)


@pytest.mark.parametrize("name", ["neural-stack", "neural-queue", "neural-deque", "deep-lstm"])
def test_scoring_through_the_mirror_gives_the_graphs_results(rng, name):
    model, _ = model_of(name, rng)
    examples = batch_of(rng, lengths=(3, 9, 1, 6, 6))
    mirrored = score_examples(model, examples)
    graphed = score_examples(model, examples, mirror=False)
    assert [r.predictions for r in mirrored] == [r.predictions for r in graphed]
    assert [r.nll for r in mirrored] == pytest.approx([r.nll for r in graphed], rel=1e-5)


@pytest.fixture
def openblas_only(monkeypatch):
    """Products by numpy's OpenBLAS alone, as on a processor where `few_row_products.c` does not run."""
    monkeypatch.setattr(neural_stack_arrays, "_few_row_products", lambda: None)


@pytest.mark.parametrize("rows,blocks", [(10, 2), (40, 1), (2, 1)])
def test_a_product_cut_into_column_blocks_is_the_product(rng, openblas_only, rows, blocks):
    weights = rng.normal(size=(512, 300)).astype(np.float32)
    product = _Product(weights, rows)
    assert len(product.blocks) == blocks
    x = rng.normal(size=(rows, 512)).astype(np.float32)
    assert np.allclose(product(x), x @ weights, rtol=1e-5, atol=1e-4)


def test_narrow_blocks_of_a_column_major_product_are_views_of_it(rng, openblas_only):
    weights = np.asfortranarray(rng.normal(size=(1024, 300)).astype(np.float32))     # a gradient's W^T, 10 rows
    product = _Product(weights, 10)
    assert len(product.blocks) == 4 and all(np.shares_memory(block, weights) for _, block in product.blocks)
    x = rng.normal(size=(10, 1024)).astype(np.float32)
    assert np.allclose(product(x), x @ weights, rtol=1e-5, atol=1e-4)


FEW_ROWS = pytest.mark.skipif(neural_stack_arrays._few_row_products() is None,
                              reason="few_row_products.c runs only on AVX2 without AVX-512")


@FEW_ROWS
@pytest.mark.parametrize("rows", [1, 2, 3, 4, 5, 6, 7, 10, 12, 13, 25])
@pytest.mark.parametrize("columns", [258, 1024])
def test_the_compiled_product_of_few_rows_is_the_product(rng, rows, columns):
    """Every block of rows and strips, a last strip of two columns (the signals' 2 + 256), more rows than one
    block; W row-major (a forward product) and column-major (a backward one's W^T); x and out rows of a wider
    array (a step's rows of the minibatch's)."""
    for weights in (rng.normal(size=(300, columns)), np.asfortranarray(rng.normal(size=(300, columns)))):
        product = _Product(weights.astype(np.float32), 25)
        assert product.kernel is not None
        wide = rng.normal(size=(rows, 400)).astype(np.float32)
        x, out = wide[:, 50:350], np.full((rows, columns + 7), 9.0, np.float32)
        result = product(x, out=out[:, 3:3 + columns])
        assert np.shares_memory(result, out)
        assert np.allclose(result, x.astype(np.float64) @ weights, rtol=1e-5, atol=1e-4)
        assert (out[:, :3] == 9).all() and (out[:, 3 + columns:] == 9).all()                # nothing written beyond
        assert np.allclose(product(np.ascontiguousarray(x)), result, rtol=1e-6, atol=1e-6)


@FEW_ROWS
def test_many_rows_go_to_openblas(rng):
    assert _Product(rng.normal(size=(64, 64)).astype(np.float32), neural_stack_arrays.FEW_ROWS + 1).kernel is None


@pytest.mark.parametrize("lengths", [(1, 6, 6, 3), (4, 4), (1,)])
def test_the_loss_is_dynets_whatever_the_lengths(rng, lengths):
    model, _ = model_of("neural-deque", rng)
    batch = batch_of(rng, lengths)
    (loss, _), = segment_losses(model, batch, 0)
    assert model.array_mirror().gradient(batch).loss == pytest.approx(loss.value() * len(batch), rel=1e-6)
