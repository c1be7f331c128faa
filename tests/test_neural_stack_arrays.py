"""The numpy mirror of the neural stack, queue and deque LSTMs' BPTT, and of the deep LSTM's
(`stackparse.models.neural_stack_arrays`), against DyNet's graph: the memory's strength updates and reads with their
vector-Jacobian products, the model's loss and every parameter's gradient, and the trainer's updates through it
(RMSProp, the embeddings' sparse rows included)."""
import dynet as dy
import numpy as np
import pytest

from stackparse.memories import grefenstette as graph
from stackparse.memories import grefenstette_arrays as arrays
from stackparse.evaluation.sequence import score_examples
from stackparse.models import get_model_class
from stackparse.models.neural_stack_arrays import _Product
from stackparse.sequences import Example
from stackparse.training.methods import TruncatedBPTT, segment_losses
from stackparse.training.trainer import OPTIMIZERS

N_IN, N_OUT = 6, 5


def strengths(rng, batch=3, n=7):
    return rng.uniform(0, 0.6, (batch, n))


@pytest.mark.parametrize("from_top", [True, False])
def test_pop_and_read_weights_are_the_graphs(rng, from_top):
    s, u = strengths(rng), rng.uniform(0, 1, (3, 1))
    dy.renew_cg()
    s_graph = dy.inputTensor(s.T.astype(np.float32), batched=True)
    u_graph = dy.inputTensor(u.T.astype(np.float32), batched=True)
    popped = graph.pop(s_graph, u_graph, from_top).npvalue().T
    weights = graph.read_weights(s_graph, from_top).npvalue().T
    assert np.allclose(arrays.pop(s.astype(np.float32), u.astype(np.float32), from_top)[0], popped, atol=1e-6)
    assert np.allclose(arrays.read_weights(s.astype(np.float32), from_top)[0], weights, atol=1e-6)


@pytest.mark.parametrize("from_top", [True, False])
def test_the_vector_jacobian_products_match_finite_differences(rng, from_top):
    s, u, g = strengths(rng), rng.uniform(0, 1, (3, 1)), rng.normal(size=(3, 7))
    popped, cache = arrays.pop(s, u, from_top)
    g_s, g_u = arrays.pop_vjp(g, cache, from_top)
    g_read = arrays.read_weights_vjp(g, arrays.read_weights(s, from_top)[1], from_top)
    eps = 1e-7
    for i in range(7):
        d = np.zeros_like(s)
        d[:, i] = eps
        assert np.allclose(((arrays.pop(s + d, u, from_top)[0] - popped) * g).sum(1) / eps, g_s[:, i], atol=1e-5)
        assert np.allclose(((arrays.read_weights(s + d, from_top)[0] - arrays.read_weights(s, from_top)[0]) * g)
                           .sum(1) / eps, g_read[:, i], atol=1e-5)
    assert np.allclose(((arrays.pop(s, u + eps, from_top)[0] - popped) * g).sum(1) / eps, g_u[:, 0], atol=1e-5)


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
    ("neural-deque", {"top_pop_offset": 0.0, "bottom_pop_offset": -2.5}),
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


@pytest.mark.parametrize("name", ["neural-stack", "neural-queue", "neural-deque", "deep-lstm"])
def test_scoring_through_the_mirror_gives_the_graphs_results(rng, name):
    model, _ = model_of(name, rng)
    examples = batch_of(rng, lengths=(3, 9, 1, 6, 6))
    mirrored = score_examples(model, examples)
    graphed = score_examples(model, examples, mirror=False)
    assert [r.predictions for r in mirrored] == [r.predictions for r in graphed]
    assert [r.nll for r in mirrored] == pytest.approx([r.nll for r in graphed], rel=1e-5)


@pytest.mark.parametrize("rows,blocks", [(10, 2), (40, 1), (2, 1)])
def test_a_product_cut_into_column_blocks_is_the_product(rng, rows, blocks):
    weights = rng.normal(size=(512, 300)).astype(np.float32)
    product = _Product(weights, rows)
    assert len(product.blocks) == blocks
    x = rng.normal(size=(rows, 512)).astype(np.float32)
    assert np.allclose(product(x), x @ weights, rtol=1e-5, atol=1e-4)


def test_narrow_blocks_of_a_column_major_product_are_views_of_it(rng):
    weights = np.asfortranarray(rng.normal(size=(1024, 300)).astype(np.float32))     # a gradient's W^T, 10 rows
    product = _Product(weights, 10)
    assert len(product.blocks) == 4 and all(np.shares_memory(block, weights) for _, block in product.blocks)
    x = rng.normal(size=(10, 1024)).astype(np.float32)
    assert np.allclose(product(x), x @ weights, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("lengths", [(1, 6, 6, 3), (4, 4), (1,)])
def test_the_loss_is_dynets_whatever_the_lengths(rng, lengths):
    model, _ = model_of("neural-deque", rng)
    batch = batch_of(rng, lengths)
    (loss, _), = segment_losses(model, batch, 0)
    assert model.array_mirror().gradient(batch).loss == pytest.approx(loss.value() * len(batch), rel=1e-6)
