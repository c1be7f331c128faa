"""Results do not depend on what an earlier graph left in DyNet's memory pool.

DyNet's own matrix product reads its output's memory before writing it (0 * old + a b), so an
infinity left in the pool (the parser's restricted log-softmax leaves -inf behind) made the next
stack model's products NaN: a parser trained earlier in the same process broke the memory tests.
The library multiplies with `stackparse._dynet.product` instead; these tests fill the pool with
zeros, then with -inf, and ask for the same, finite numbers both times.
"""
from __future__ import annotations

import dynet as dy
import numpy as np
import pytest

from stackparse._dynet import product
from stackparse.models import MODELS, get_model_class


def _fill_pool(value: float) -> None:
    """Leave `value` in the first 16 MB of DyNet's forward memory, then start a new graph."""
    dy.renew_cg()
    (dy.inputTensor(np.full((2000, 2000), value)) * 1.0).npvalue()
    dy.renew_cg()


def test_dynets_own_product_is_what_the_library_avoids():
    a, b = np.arange(6.0).reshape(2, 3), np.ones((3, 4))
    _fill_pool(-np.inf)
    assert not np.isfinite((dy.inputTensor(a) * dy.inputTensor(b)).npvalue()).all()   # DyNet's behaviour
    _fill_pool(-np.inf)
    assert np.array_equal(product(dy.inputTensor(a), dy.inputTensor(b)).npvalue(), a @ b)


def _scores(name: str, fill: float) -> np.ndarray:
    dy.reset_random_seed(3)
    pc = dy.ParameterCollection()
    cls = get_model_class(name)
    model = cls(pc, cls.Config(hidden=4), 4, 3)
    _fill_pool(fill)
    state, scores = model.initial_state(2), []
    for ids in ([0, 1], [2, 3], [1, 1], [3, 0]):
        state = model.step(state, ids)
        scores.append(model.scores(state).npvalue())
    return np.stack(scores)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_scores_the_same_whatever_the_pool_held(name):
    clean, dirty = _scores(name, 0.0), _scores(name, -np.inf)
    assert np.isfinite(dirty).all() and np.array_equal(clean, dirty)
