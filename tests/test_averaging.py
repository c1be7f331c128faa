"""The moving average of the parameters: the update rule, its warm-up, and swapping it in and out."""
import dynet as dy
import numpy as np
import pytest

from stackparse.training.averaging import ParameterAverage


def collection():
    pc = dy.ParameterCollection()
    p = pc.add_parameters((2,), init=0.0)
    lp = pc.add_lookup_parameters((3, 2), init=0.0)
    return pc, p, lp


def test_average_follows_the_decayed_rule_with_warm_up():
    pc, p, lp = collection()
    average = ParameterAverage(pc, decay=0.5)
    expected = np.zeros(2)
    for n, value in enumerate([4.0, -2.0, 8.0, 1.0], start=1):
        p.set_value(np.full(2, value))
        lp.init_from_array(np.full((3, 2), value))
        average.update()
        d = min(0.5, (1 + n) / (10 + n))        # warm-up: 2/11, 3/12, then 0.5
        expected = d * expected + (1 - d) * value
    with average.applied():
        assert np.allclose(p.as_array(), expected)
        assert np.allclose(lp.as_array(), expected[0])


def test_sampling_every_k_updates_keeps_the_time_constant():
    pc, p, _ = collection()
    average = ParameterAverage(pc, decay=0.9, every=3)
    p.set_value(np.ones(2))
    for _ in range(2):
        average.update()
    assert np.allclose(average.values[0], 0.0)      # nothing folded in before the 3rd update
    average.update()
    d = min(0.9, 4 / 13) ** 3
    assert np.allclose(average.values[0], 1 - d)


def test_applied_swaps_the_average_in_and_the_raw_values_back(tmp_path):
    pc, p, lp = collection()
    average = ParameterAverage(pc, decay=0.9)
    p.set_value(np.array([3.0, 5.0]))
    lp.init_from_array(np.full((3, 2), 7.0))
    with average.applied():
        assert np.allclose(p.as_array(), 0.0) and np.allclose(lp.as_array(), 0.0)
    assert np.allclose(p.as_array(), [3.0, 5.0]) and np.allclose(lp.as_array(), 7.0)
    with pytest.raises(RuntimeError):
        with average.applied():
            raise RuntimeError("validation failed")
    assert np.allclose(p.as_array(), [3.0, 5.0])


def test_save_and_load_restore_the_average_exactly(tmp_path):
    pc, p, _ = collection()
    average = ParameterAverage(pc, decay=0.7)
    p.set_value(np.array([1.5, -0.5]))
    average.update()
    average.save(tmp_path / "average.npz")
    other = ParameterAverage(pc, decay=0.7)
    other.load(tmp_path / "average.npz")
    assert other.updates == 1
    assert all(np.array_equal(a, b) for a, b in zip(average.values, other.values))
