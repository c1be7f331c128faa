"""The persistent stack-LSTM: versions are values, the graph is a tree, gradients reach every element."""
import dynet as dy
import numpy as np
import pytest

from stackparse import StackLSTM


@pytest.fixture
def stack_lstm():
    pc = dy.ParameterCollection()
    return pc, StackLSTM(pc, input_dim=3, hidden_dim=4)


def vec(*xs):
    return dy.inputVector(list(xs))


def test_pop_returns_the_exact_earlier_version(stack_lstm):
    _, sl = stack_lstm
    empty = sl.initial_state()
    one = empty.push(vec(1, 0, 0), payload="a")
    two = one.push(vec(0, 1, 0), payload="b")
    assert two.pop() is one and one.pop() is empty
    assert list(two) == ["b", "a"] and two.top == "b" and len(two) == 2 and len(empty) == 0
    assert np.allclose(two.pop().output().npvalue(), one.output().npvalue())
    with pytest.raises(IndexError):
        empty.pop()


def test_branches_from_an_old_version_are_both_valid(stack_lstm):
    _, sl = stack_lstm
    base = sl.initial_state().push(vec(1, 0, 0), "a")
    left = base.push(vec(0, 1, 0), "b")
    right = base.push(vec(0, 0, 1), "c")
    before = left.output().npvalue()
    assert list(left) == ["b", "a"] and list(right) == ["c", "a"]
    assert not np.allclose(left.output().npvalue(), right.output().npvalue())
    # Pushing onto `base` again changed nothing in `left`.
    assert np.allclose(left.output().npvalue(), before)
    # The encoding depends only on the contents: the same pushes give the same encoding.
    again = sl.initial_state().push(vec(1, 0, 0)).push(vec(0, 1, 0))
    assert np.allclose(again.output().npvalue(), before)


def test_gradient_from_the_top_reaches_every_element_and_only_those(stack_lstm):
    """Primer figs. 12-13: after pushes and pops the graph is a tree; d top / d x_i is non-zero
    exactly for the elements on the final stack, and equals a finite-difference estimate."""
    pc, sl = stack_lstm
    xs = [pc.add_parameters((3,), init=dy.NormalInitializer(0, 1)) for _ in range(4)]

    def run():
        dy.renew_cg()
        s = sl.initial_state().push(dy.parameter(xs[0]), 0).push(dy.parameter(xs[1]), 1)
        s = s.pop().push(dy.parameter(xs[2]), 2).push(dy.parameter(xs[3]), 3)   # x1 was popped
        return s, dy.sum_elems(s.output())

    s, loss = run()
    assert list(s) == [3, 2, 0]
    loss.forward()
    loss.backward()
    grads = [x.grad_as_array().copy() for x in xs]
    assert np.abs(grads[1]).max() == 0.0
    for i in (0, 2, 3):
        assert np.abs(grads[i]).max() > 1e-6
        for j in range(3):       # central differences, coordinate by coordinate
            value = xs[i].as_array()
            bumped = []
            for eps in (1e-3, -1e-3):
                x = value.copy()
                x[j] += eps
                xs[i].set_value(x)
                bumped.append(run()[1].value())
            xs[i].set_value(value)
            assert (bumped[0] - bumped[1]) / 2e-3 == pytest.approx(grads[i][j], abs=1e-3)


def test_saves_and_loads_with_dynet_protocol(tmp_path, stack_lstm):
    pc, sl = stack_lstm
    x = vec(1, 2, 3)
    expected = sl.initial_state().push(x).output().npvalue()
    dy.save(str(tmp_path / "m"), [sl])
    (loaded,) = dy.load(str(tmp_path / "m"), dy.ParameterCollection())
    dy.renew_cg()
    assert np.allclose(loaded.initial_state().push(vec(1, 2, 3)).output().npvalue(), expected)
