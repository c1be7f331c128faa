"""The encoders as a user meets them: a model trains, saves, and loads in a fresh process; shapes;
batching; transduce; the stack-LSTM's push and pop; error messages; docstrings; docs/encoders.md."""
import inspect
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import dynet as dy
import numpy as np
import pytest

import stackparse
from stackparse.encoders import EncoderState, StackLSTMEncoderState
from stackparse.encoders.nspda import BOTTOM
from stackparse.errors import UserError
from stackparse.memories.discrete_stack import EMPTY, Action, update
from stackparse.models import get_model_class
from tests.encoder_user_model import Tagger, train

ROOT = Path(__file__).resolve().parents[1]
IN, HIDDEN, T = 4, 8, 5
ENCODERS = {                                  # small options, so that every test stays fast
    "StackLSTMEncoder": {},
    "StackRNNEncoder": {"stacks": 3},
    "ListRNNEncoder": {"lists": 2, "no_op": True},
    "NeuralStackEncoder": {"memory_size": 4},
    "NeuralQueueEncoder": {"memory_size": 4},
    "NeuralDequeEncoder": {"memory_size": 3, "layers": 2},
    "NSPDAEncoder": {},                       # third order: W^s is (8, 8 * 4 * 6)
}
MEMORY_SHAPES = {                             # the memory after T inputs, batch B
    "StackRNNEncoder": lambda m, B: (m.content.dim(), ((2 + T, 3), B)),            # k rows, one more per step
    "ListRNNEncoder": lambda m, B: (m.content.dim(), ((3 + 2 * T, 2), B)),         # 2k - 1, two more per step
    "NeuralStackEncoder": lambda m, B: (m.values.dim(), ((4, T), B)),              # a column per step
    "NeuralQueueEncoder": lambda m, B: (m.values.dim(), ((4, T), B)),
    "NeuralDequeEncoder": lambda m, B: (m.values.dim(), ((3, 2 * T), B)),          # two columns per step
    "StackLSTMEncoder": lambda m, B: (len(m), T),                                  # T pushes
    "NSPDAEncoder": lambda m, B: ((m.batch_size, max(m.depths()) <= T + 1), (B, True)),  # marker + <= T pushes
}


def build(name, **options):
    return getattr(stackparse, name)(dy.ParameterCollection(), IN, HIDDEN, **{**ENCODERS[name], **options})


def inputs(values):
    """Expressions for (T, IN, B) values: batched, or plain vectors for B = 1."""
    if values.shape[2] == 1:
        return [dy.inputVector(x[:, 0]) for x in values]
    return [dy.inputTensor(x, batched=True) for x in values]


def array(e):
    """(d, B) values of a (d,) x B expression."""
    return e.npvalue().reshape(e.dim()[0][0], -1)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Every encoder in a user's tagger, trained a few steps on a toy problem (is the running sum of the
    first input component positive?), saved with dy.save, and loaded and run by a fresh process.
    name -> (losses, scores predicted here, scores predicted by the fresh process)."""
    directory = tmp_path_factory.mktemp("saved")
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(6, IN, 4))
    tags = (np.cumsum(xs[:, 0], axis=0) > 0).astype(int)
    np.save(directory / "inputs.npy", xs)
    results = {}
    for name, options in ENCODERS.items():
        dy.reset_random_seed(1)
        pc = dy.ParameterCollection()
        tagger = Tagger(pc, name, IN, HIDDEN, 2, options)
        losses = train(tagger, dy.AdamTrainer(pc, 0.05), xs, tags, steps=8)
        dy.save(str(directory / f"{name}.model"), [tagger])
        results[name] = (losses, tagger.predict(xs))
    env = {**os.environ, "STACKPARSE_DYNET_MEM": "64"}     # small DyNet pools: a quick start
    fresh = subprocess.run([sys.executable, "-c", "from tests.encoder_user_model import main; main()", str(directory)],
                           env=env, cwd=ROOT, capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stderr
    return {name: (*results[name], np.load(directory / f"{name}.loaded.npy")) for name in ENCODERS}


@pytest.mark.parametrize("name", ENCODERS)
def test_a_users_model_trains_saves_and_predicts_identically_in_a_fresh_process(trained, name):
    losses, predicted, loaded = trained[name]
    assert losses[-1] < losses[0]
    assert predicted.shape == (6, 2, 4)
    assert np.array_equal(loaded, predicted)          # dy.save keeps every bit of every parameter


@pytest.mark.parametrize("name", ENCODERS)
def test_a_bare_encoder_saves_and_loads_with_its_settings(tmp_path, name):
    encoder = build(name)
    dy.save(str(tmp_path / "encoder"), [encoder])
    (loaded,) = dy.load(str(tmp_path / "encoder"), dy.ParameterCollection())
    assert type(loaded) is type(encoder) and loaded.spec == encoder.spec
    xs = np.random.default_rng(1).normal(size=(T, IN, 1))
    expected = array(encoder.initial_state().transduce(inputs(xs))[-1])
    assert np.allclose(array(loaded.initial_state().transduce(inputs(xs))[-1]), expected, atol=1e-5)


@pytest.mark.parametrize("name", ENCODERS)
def test_outputs_and_memory_have_the_documented_shapes(rng, name):
    encoder = build(name)
    assert encoder.param_collection().name().startswith(f"/{name.lower()}")
    start = encoder.initial_state(3)
    assert start.output().dim() == ((HIDDEN,), 3)
    end = start.add_inputs(inputs(rng.normal(size=(T, IN, 3))))[-1]
    assert end.output().dim() == ((HIDDEN,), 3)
    got, expected = MEMORY_SHAPES[name](end.memory, 3)
    assert got == expected


@pytest.mark.parametrize("name", ENCODERS)
def test_a_batch_of_three_computes_what_three_single_runs_compute(rng, name):
    encoder, xs = build(name), rng.normal(size=(T, IN, 3))
    together = np.stack([array(h) for h in encoder.initial_state(3).transduce(inputs(xs))])
    for b in range(3):
        alone = np.stack([array(h) for h in encoder.initial_state().transduce(inputs(xs[..., b:b + 1]))])
        assert np.allclose(together[..., b], alone[..., 0], atol=1e-6)


@pytest.mark.parametrize("name", ENCODERS)
def test_transduce_is_repeated_add_input_and_states_are_values(rng, name):
    encoder, xs = build(name), inputs(rng.normal(size=(T, IN, 2)))
    start = encoder.initial_state(2)
    state, stepped = start, []
    for x in xs:
        state = state.add_input(x)
        stepped.append(array(state.output()))
    assert all(np.array_equal(a, array(b)) for a, b in zip(stepped, start.transduce(xs)))
    assert np.array_equal(array(start.add_input(xs[0]).output()), stepped[0])     # `start` did not change


def test_the_stack_lstm_encoder_pushes_and_pops_as_the_user_says(rng):
    encoder = build("StackLSTMEncoder")
    xs = inputs(rng.normal(size=(3, IN, 2)))
    empty = encoder.initial_state(2)
    one = empty.add_input(xs[0])
    two = one.push(xs[1], payload="b")
    assert len(two) == 2 and two.top == "b" and one.top is None
    assert two.pop().memory is one.memory and np.array_equal(array(two.pop().output()), array(one.output()))
    assert isinstance(two.pop(), StackLSTMEncoderState)
    # A stack's encoding is that of its contents: popping then pushing x2 equals pushing x2 on `one`.
    assert np.allclose(array(two.pop().pop().push(xs[0]).push(xs[2]).output()),
                       array(one.push(xs[2]).output()), atol=1e-6)
    with pytest.raises(UserError, match="StackLSTMEncoder: pop from an empty stack"):
        empty.pop()


@pytest.mark.parametrize("name", ENCODERS)
def test_bad_inputs_are_user_errors_naming_the_encoder_and_the_expected_shape(rng, name):
    encoder = build(name)
    state = encoder.initial_state(2)
    expected = re.escape(f"shape ({IN},) with batch size 2")
    with pytest.raises(UserError, match=rf"^{name}: expected an input of {expected}, got shape \(5,\)$"):
        state.add_input(dy.inputTensor(np.zeros((5, 2)), batched=True))
    with pytest.raises(UserError, match=rf"^{name}: batch size mismatch: .* holds 3; expected {expected}$"):
        state.add_input(dy.inputTensor(np.zeros((IN, 3)), batched=True))
    with pytest.raises(UserError, match=rf"^{name}: batch size mismatch: .* holds 1; expected {expected}$"):
        state.add_input(dy.inputVector([0.0] * IN))
    with pytest.raises(UserError, match=rf"^{name}: empty sequence; expected one or more inputs of {expected}$"):
        state.transduce([])
    with pytest.raises(UserError, match=rf"^{name}: an input must be a DyNet expression of {expected}, got ndarray"):
        state.add_input(np.zeros(IN))


@pytest.mark.parametrize("name", ENCODERS)
def test_bad_settings_are_user_errors_naming_the_encoder(name):
    with pytest.raises(UserError, match=rf"^{name}: hidden_dim must be an integer >= 1 \(got 0\)$"):
        getattr(stackparse, name)(dy.ParameterCollection(), IN, 0)
    with pytest.raises(UserError, match=rf"^{name}: unknown option colour; its options are "):
        build(name, colour="red")
    with pytest.raises(UserError, match=rf"^{name}: batch_size must be an integer >= 1 \(got 0\)$"):
        build(name).initial_state(0)


def test_memory_options_are_checked_too():
    with pytest.raises(UserError, match=r"^StackRNNEncoder: stacks must be an integer >= 1 \(got 0\)$"):
        build("StackRNNEncoder", stacks=0)
    with pytest.raises(UserError, match=r"^NeuralDequeEncoder: memory_size must be an integer >= 1"):
        build("NeuralDequeEncoder", memory_size=0)
    with pytest.raises(UserError, match=r"^NSPDAEncoder: order must be 2 or 3 \(got 4\)$"):
        build("NSPDAEncoder", order=4)
    with pytest.raises(UserError, match=r"^NSPDAEncoder: init_scale must be positive \(got 0\)$"):
        build("NSPDAEncoder", init_scale=0)


def test_defaults_are_the_documented_ones():
    pc = dy.ParameterCollection()
    assert vars(stackparse.StackRNNEncoder(pc, 3, 5).spec) == dict(
        input_dim=3, hidden_dim=5, k=2, no_op=False, recurrent=True, stacks=10)
    assert stackparse.ListRNNEncoder(pc, 3, 5).spec.lists == 5
    assert vars(stackparse.NeuralDequeEncoder(pc, 3, 5).spec) == dict(      # the offsets: issue 19
        input_dim=3, hidden_dim=5, memory_size=5, layers=1, pop_bias=-1.0, top_pop_offset=-2.0,
        bottom_push_offset=-4.0, bottom_pop_offset=0.0, learned_h0=False)
    assert stackparse.StackLSTMEncoder(pc, 3, 5).spec.layers == 1
    assert vars(stackparse.NSPDAEncoder(pc, 3, 5).spec) == dict(
        input_dim=3, hidden_dim=5, order=3, pairing="read-input", action_quantizer="paper", bottom=True,
        quantize_states=True, init_scale=0.5)


@pytest.mark.parametrize("order", [2, 3])
def test_the_nspda_encoder_on_one_hot_inputs_is_the_nspda_model(rng, order):
    """With a model's weights and the one-hot symbols as inputs, the encoder computes the model's states,
    reads and actions exactly, and its stacks hold the positions of the symbols the model's stacks hold (the
    model with one-hot reads, as the encoder's: the paper's read values are for one-hot symbols)."""
    symbols, batch = 3, 4
    cls = get_model_class(f"nspda{order}")
    model = cls(dy.ParameterCollection(), cls.Config(hidden=5, init_scale=2.0, read_values="onehot"), symbols, 2)
    model.training = True                                  # weights as they are, as the encoder uses them
    encoder = stackparse.NSPDAEncoder(dy.ParameterCollection(), symbols, 5, order=order)
    for theirs, ours in zip(model.nspda.parameters, encoder.controller.parameters):
        ours.set_value(theirs.as_array())
    ids = rng.integers(0, symbols, size=(12, batch))
    expected, state, actions = model.initial_state(batch), encoder.initial_state(batch), set()
    for row in ids:
        expected, state = model.step(expected, row), state.add_input(model.embed(row))
        assert np.array_equal(state.output().npvalue(), expected.state.npvalue())
        assert np.array_equal(state.controller_state.read.npvalue(), expected.read.npvalue())
        assert np.array_equal(state.controller_state.action.npvalue(), expected.action.npvalue())
        pushed = [tuple(symbols if p == BOTTOM else ids[p, b] for p in stack) for b, stack in
                  enumerate(state.memory.stacks)]
        assert pushed == list(expected.stack.stacks)
        actions |= set(expected.action.npvalue().reshape(-1))
    assert actions == {-1.0, 0.0, 1.0}                     # every action was taken: the test means something


@pytest.mark.parametrize("bottom", [True, False])
def test_the_nspda_encoder_pushes_its_inputs_and_reads_the_top(rng, bottom):
    values = rng.normal(size=(8, IN, 2))
    encoder = build("NSPDAEncoder", order=2, bottom=bottom, init_scale=2.0)
    state = encoder.initial_state(2)
    assert state.memory.stacks == (((BOTTOM,),) * 2 if bottom else ((), ()))
    for t, x in enumerate(inputs(values)):
        before, state = state.memory, state.add_input(x)
        actions = array(state.controller_state.action)[0]
        assert set(actions) <= {-1.0, 0.0, 1.0} and set(np.unique(array(state.output()))) <= {0.0, 1.0}
        assert state.memory.stacks == tuple(update(s, Action(int(a)), t) for s, a in zip(before.stacks, actions))
        read = array(state.controller_state.read)                                   # (IN + 2, B)
        for b, top in enumerate(state.memory.read()):
            code = np.zeros(IN + 2)
            if top >= 0:
                code[:IN] = values[top, :, b]
            else:
                code[IN if top == BOTTOM else IN + 1] = 1.0
            np.testing.assert_allclose(read[:, b], code, rtol=1e-6)


def test_the_nspda_encoder_trains_its_action_tensor_and_the_pushed_inputs_through_the_read(rng):
    pc = dy.ParameterCollection()
    encoder = stackparse.NSPDAEncoder(pc, IN, HIDDEN, init_scale=2.0)
    encoder.controller.ba.set_value([1.0])                         # mostly PUSH: inputs are on top to be read
    xs = [pc.add_parameters((IN,), init=dy.NumpyInitializer(x)) for x in rng.normal(size=(T, IN))]
    states = encoder.initial_state().add_inputs([x.expr(True) for x in xs])
    # The reads alone: their gradient reaches W^a through eq. 6 and the inputs through e(.).
    weights = dy.inputVector(rng.normal(size=IN + 2))
    loss = dy.esum([dy.dot_product(weights, s.controller_state.read) for s in states])
    loss.value()
    loss.backward()
    assert np.abs(encoder.controller.Wa.grad_as_array()).sum() > 0
    read_inputs = {top for s in states for top in s.memory.read() if top >= 0}
    assert read_inputs and all(np.abs(xs[p].grad_as_array()).sum() > 0 for p in read_inputs)
    continuous = stackparse.NSPDAEncoder(pc, IN, HIDDEN, quantize_states=False).initial_state()
    assert 0 < array(continuous.add_input(xs[0].expr(True)).output()).min()      # sigmoid states


def public_api():
    """{qualified name: object} of every exported class and its public methods and properties (its own and
    those inherited from stackparse), and of the state classes the encoders return."""
    api = {}
    for cls in [getattr(stackparse, name) for name in stackparse.__all__] + [EncoderState, StackLSTMEncoderState]:
        api[cls.__name__] = cls
        for klass in cls.__mro__:
            for member, value in vars(klass).items() if klass.__module__.startswith("stackparse") else ():
                if not member.startswith("_") and (inspect.isfunction(value) or
                                                   isinstance(value, (property, classmethod, staticmethod))):
                    api.setdefault(f"{klass.__name__}.{member}", value)
    return api


@pytest.mark.parametrize("qualname", public_api())
def test_public_classes_and_functions_document_their_args_and_returns(qualname):
    obj = public_api()[qualname]
    function = obj.fget if isinstance(obj, property) else getattr(obj, "__func__", obj)
    doc = inspect.getdoc(function) or ""
    assert doc, f"{qualname} has no docstring"
    if inspect.isclass(obj):
        parameters = list(inspect.signature(obj.__init__).parameters)[1:]
        assert not parameters or "Args:" in doc, f"{qualname}: no Args"
        return
    signature = inspect.signature(function)
    arguments = [p for p in signature.parameters if p not in ("self", "cls")]
    assert not arguments or "Args:" in doc, f"{qualname}: no Args"
    assert signature.return_annotation in ("None", None, inspect.Signature.empty) or "Returns:" in doc, \
        f"{qualname}: no Returns"


def python_blocks():
    text = (ROOT / "docs" / "encoders.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


@pytest.mark.parametrize("index", range(len(python_blocks())))
def test_the_examples_of_docs_encoders_md_run(index, monkeypatch):
    # Each example runs as a module of its own, as a user's script would: classes it defines can be pickled.
    module = types.ModuleType(f"encoders_md_example_{index + 1}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(python_blocks()[index], f"docs/encoders.md, example {index + 1}", "exec"), module.__dict__)
