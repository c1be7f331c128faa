"""Views of DyNet's parameter memory (`stackparse._dynet_views`): on this DyNet they exist and are DyNet's values and
gradients, both ways; what cannot be mapped gives None."""
import dynet as dy
import numpy as np
import pytest

from stackparse import _dynet_views
from stackparse._dynet_views import read, views, write


@pytest.fixture
def pc():
    return dy.ParameterCollection()


def test_this_dynet_is_the_one_the_offsets_are_for():
    assert _dynet_views.SUPPORTED_HERE, "the views fall back on DyNet's copies: the numpy mirrors are slow here"


@pytest.mark.parametrize("shape", [(5, 3), (4,), (1, 7)])
def test_the_views_are_the_values_and_the_gradient(pc, shape):
    p = pc.add_parameters(shape)
    mapped = views(p)
    assert mapped.values.shape == shape and np.array_equal(mapped.values, p.as_array())
    dy.renew_cg()
    loss = dy.sum_elems(dy.cmult(dy.tanh(p), dy.inputTensor(np.arange(np.prod(shape)).reshape(shape))))
    loss.backward()
    assert np.allclose(mapped.grad, p.grad_as_array())


def test_writing_through_a_view_sets_the_parameter_and_dynets_update_shows_in_it(pc):
    p = pc.add_parameters((3, 2))
    write(p, np.arange(6.0).reshape(3, 2))
    assert np.array_equal(p.as_array(), np.arange(6.0).reshape(3, 2))
    dy.renew_cg()
    dy.sum_elems(p).backward()
    dy.SimpleSGDTrainer(pc, 0.5).update()
    assert np.array_equal(read(p), np.arange(6.0).reshape(3, 2) - 0.5)


def test_what_is_not_a_parameter_is_not_mapped(pc):
    assert views(pc.add_lookup_parameters((4, 3))) is None
