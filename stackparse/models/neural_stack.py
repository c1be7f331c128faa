"""The memory-enhanced LSTMs of Grefenstette et al. (2015, §3.4) as sequence models, and the deep-LSTM
baseline of their §4.4.

With e(x_t) the embedding of the input symbol (§4: 64 dimensions), the LSTM controller and its memory
(eq. 1-11) are the encoders of `stackparse.encoders.grefenstette`, written there once; the output is
    y_t = softmax(V o_t + c)                                               (SequenceModel.scores)

Defaults: the paper's (§4.4): 256 hidden units, 256-dimensional values, 64-dimensional embeddings, a learned h_0
(§3.4: "h_0 ... is initialised randomly and optimised during training"; r_0, V_0 and s_0 zero). The paper also runs
512 units (`--hidden 512`; the `transduction` benchmark's `full-512` profile), and this project's earlier models
(64 units, 64-dimensional values, zero h_0) are settings (the benchmark's `today` profile).

Choices the paper leaves open, and why:
- "Separate word-to-index mappings are used for source and target vocabularies. Separate embedding matrices are used
  to encode input and output (predicted) embeddings" (§4). Source and target symbols have separate ids
  (`stackparse.tasks.transduction`), so the rows that embed the target symbols read back (the output, predicted
  symbols) are never those of the source symbols: one lookup table of disjoint rows is two embedding matrices, with
  the same initial law (DyNet's lookup initialisation depends on the width only); the deep LSTM reads the same
  embeddings, and `embedding` 0 gives one-hot inputs as the other models here. The softmax reads o_t
  directly (V o_t + c): read as "output embeddings", the sentence could also mean a 64-dimensional softmax matrix
  behind a projection of o_t, which `stackparse.models.base.SequenceModel` (V of width `hidden`) cannot express yet.
- The deep LSTM (the paper's benchmark, "the Deep LSTMs described in [1]") learns its h_0 as the controllers do
  (`learned_h0`, one vector per layer, the cells zero): §3.4 states it for the memory-enhanced LSTMs, and the
  benchmark differs from them only by its memory; false gives the zero state of Sutskever et al.
- The pop bias (`pop_bias`): see `stackparse.encoders.grefenstette`.
- The deque has two starts (`NeuralDequeLSTM.starts`: its settings as given, by default the queue's start with
  RMSProp at 5e-4, then the stack-like start, `STACK_LIKE_START`, at 1e-3), and each learns tasks the other does not
  (docs/deque.md). The paper keeps, of several runs over its grid of rates, the model of lowest average training
  perplexity (§5), and restarted its runs until the memory was used (Appendix B); the deque's own training does both
  in small: two restarts, one per start, each trained `probe_epochs` epochs, then the one of lower training loss
  (`keep` train_loss) trained on to convergence (`default_training`: until `PATIENCE` epochs bring no better
  validation entropy, a longer wait than the task's). Each start's rate is the one of the paper's grid
  that measured best for the tasks that start learns (docs/deque.md, seventh part: the queue's start learns gender at
  5e-4 with each seed tried and at 1e-3 with none fully; the stack-like start learns reversal at 1e-3 and had not at
  5e-4 after 71 epochs). `--restarts 1` trains the start given alone (a start's settings replace those given); the
  `transduction` benchmark runs each start as a point of its grid instead.
- The deep LSTM's layers each read the layer below only, as in [1] (Sutskever et al.). Appendix D's Table 2 hints at
  another network: its 4- and 8-layer counts are those of LSTMs whose every layer also reads the 64-dimensional
  input (a layer above the first: 4h(h + 64) + 4h h + 4h weights), and none of the six deep rows is the count of
  plain stacked layers, even before any embedding or softmax. The text names [1], so the stacked network is the
  default; `input_every_layer` builds the other.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import dynet as dy

from stackparse.config import setting
from stackparse.encoders.grefenstette import (
    STACK_LIKE_START,
    NeuralDequeEncoder,
    NeuralDequeConfig,
    NeuralMemoryConfig,
    NeuralQueueEncoder,
    NeuralStackEncoder,
    h0_state,
    learned_h0,
)
from stackparse.models.base import EmbeddingConfig, EncoderModel, Memoryless, SequenceModel, model_settings, register
from stackparse.models.neural_stack_arrays import NO_X, X_FIRST, X_LAST, LSTMArrays, MirrorParts, available


PAPER_SIZES = {"memory_size": 256, "learned_h0": True}
"""The memory models' defaults where they differ from the encoders' (§3.4, §4.4)."""


@dataclass(frozen=True)
class TransducerConfig(EmbeddingConfig):
    """Settings shared by the models of Grefenstette et al.'s experiments (the paper's sizes: see above)."""
    hidden: int = setting(256, "hidden units (Grefenstette et al.: 256 and 512)", min=1)


NeuralMemoryModelConfig = model_settings("NeuralMemoryModelConfig", NeuralMemoryConfig, TransducerConfig,
                                         **PAPER_SIZES)
NeuralDequeModelConfig = model_settings("NeuralDequeModelConfig", NeuralDequeConfig, TransducerConfig, **PAPER_SIZES)


@dataclass(frozen=True)
class DeepLSTMConfig(TransducerConfig):
    """The benchmark of §4.4 (1, 2, 4 and 8 layers); 2 layers have about as many parameters as the memory models."""
    layers: int = setting(2, "recurrent layers", min=1)
    learned_h0: bool = setting(True, "learn the initial hidden state of each layer (the cells start at zero); "
                               "false = a zero initial state")
    input_every_layer: bool = setting(False, "every layer above the first also reads the input embedding, [h_below; "
                                      "x_t] (the network Appendix D's parameter counts describe); false = each "
                                      "layer reads the one below only (Sutskever et al., as §4.4 says)")


@register
class DeepLSTM(Memoryless, SequenceModel):
    """The deep LSTM: DyNet LSTM builders over the embedded input, the top layer's h read by the softmax.

    The recurrence is a sequence of blocks, each a DyNet VanillaLSTMBuilder, the first reading x_t and each
    next one [h of the block below; x_t]: one block of all the layers is Sutskever et al.'s stacked LSTM (each
    layer reads the one below), one block per layer the network whose every layer also reads the input
    (`input_every_layer`). A block of L layers draws its initial weights as L one-layer blocks would, in the
    same order (DyNet creates a builder's parameters layer by layer)."""
    name = "deep-lstm"
    description = "Deep LSTM over learned embeddings, the benchmark of Grefenstette et al. 2015 (§4.4)"
    Config = DeepLSTMConfig

    def __init__(self, pc, config: DeepLSTMConfig, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        x, h = self.input_size(), config.hidden
        if config.input_every_layer:
            self.blocks = [dy.VanillaLSTMBuilder(1, x if i == 0 else h + x, h, self.pc) for i in range(config.layers)]
        else:
            self.blocks = [dy.VanillaLSTMBuilder(config.layers, x, h, self.pc)]
        self.block_layers = [config.layers // len(self.blocks)] * len(self.blocks)
        self.add_embedding()            # after the builders: DyNet draws initial values in creation order
        self.h0 = learned_h0(self.pc, config.hidden, config.layers) if config.learned_h0 else []

    def initial_state(self, batch_size, tensors=None):
        """Per block, its DyNet state: from `tensors` (`state_tensors`) if given, else the learned h_0 of each layer
        and zero cells (broadcast over the batch), else DyNet's zero state."""
        if tensors is None and self.h0:
            tensors, start = [], 0
            for n in self.block_layers:
                tensors += h0_state(self.h0[start:start + n], self.config.hidden)
                start += n
        if tensors is None:
            return tuple(block.initial_state() for block in self.blocks)
        states, start = [], 0
        for block, n in zip(self.blocks, self.block_layers):     # a block's state: its L cells, then its L h
            states.append(block.initial_state(list(tensors[start:start + 2 * n])))
            start += 2 * n
        return tuple(states)

    def step(self, state, ids):
        x, below, new = self.embed(ids), None, []
        for block_state in state:
            block_state = block_state.add_input(x if below is None else dy.concatenate([below, x]))
            below = block_state.output()
            new.append(block_state)
        return tuple(new)

    def hidden(self, state):
        return state[-1].output()

    def state_tensors(self, state):
        return [t for block_state in state for t in block_state.s()]

    def array_mirror(self) -> LSTMArrays | None:
        """The numpy mirror of this model's passes (`ArrayMirror`): the first layer reads x_t, each next one the
        layer below, and [h below; x_t] with `input_every_layer`."""
        if not available(memory=False):
            return None
        layers = [layer for block in self.blocks for layer in block.get_parameters()]
        above = X_LAST if self.config.input_every_layer else NO_X
        return LSTMArrays(self, MirrorParts(layers, [X_FIRST] + [above] * (len(layers) - 1), self.h0))


PATIENCE = 50
"""Epochs without a better validation entropy that stop the deque's own training (longer than the transduction
tasks'): the paper trains "an unbounded number of steps" and reports results "at convergence"; the queue's start on
SVO→SOV swings for tens of epochs on the training lengths before its validation entropy falls again, and the tasks'
patience stopped a run of it short of convergence (docs/deque.md, seventh part)."""
PROBE_EPOCHS = 40
"""Epochs (of 100 batches, the transduction tasks') each of the deque's starts trains before the one of lower training
loss goes on: past the epoch where its runs that learnt reversal (stack-like start) or copy (the queue's) had learnt
it (docs/deque.md)."""


class _NeuralMemoryLSTM(EncoderModel):
    """A sequence model around a Grefenstette et al. encoder, reading embedded input symbols."""
    Config = NeuralMemoryModelConfig
    end_names: ClassVar[tuple[str, ...]] = ("",)
    evaluation_batch = 16       # a graph holds every step's memory: ~25 MB per 250-step sequence

    def hidden(self, state):
        return state.output

    def array_mirror(self) -> LSTMArrays | None:
        """The numpy mirror of this model's passes (`ArrayMirror`): the controller's layers (the first reads
        [x_t; r_{t-1}]), its output layer o_t and its memory."""
        if not available(memory=True):
            return None
        e = self.controller
        layers = e.lstm.get_parameters()
        return LSTMArrays(self, MirrorParts(layers, [X_FIRST] + [NO_X] * (len(layers) - 1), e.h0, (e.W_o, e.b_o), e))

    def trace(self, state):
        """Push and pop signals of the last step, per end, and the total strength in the memory."""
        columns = []
        for name, signal in zip(self.end_names, state.signals):
            columns += [(f"push{name}", f"{signal.push.npvalue().item(0):.2f}"),
                        (f"pop{name}", f"{signal.pop.npvalue().item(0):.2f}")]
        return columns + [("strength", f"{state.memory.strengths.npvalue().reshape(-1).sum():.2f}")]


@register
class NeuralStackLSTM(_NeuralMemoryLSTM):
    name = "neural-stack"
    description = "LSTM controlling a neural stack (Grefenstette et al. 2015, eq. 1-3)"
    Encoder = NeuralStackEncoder


@register
class NeuralQueueLSTM(_NeuralMemoryLSTM):
    name = "neural-queue"
    description = "LSTM controlling a neural queue (Grefenstette et al. 2015, eq. 4-5)"
    Encoder = NeuralQueueEncoder


@register
class NeuralDequeLSTM(_NeuralMemoryLSTM):
    name = "neural-deque"
    description = "LSTM controlling a neural double-ended queue (Grefenstette et al. 2015, eq. 6-11)"
    Encoder = NeuralDequeEncoder
    Config = NeuralDequeModelConfig
    starts = ({**STACK_LIKE_START, "lr": 1e-3},)
    default_training = {"train": {"lr": 5e-4, "restarts": 2, "keep": "train_loss", "probe_epochs": PROBE_EPOCHS,
                                  "patience": PATIENCE}}
    end_names = (" top", " bottom")
    evaluation_batch = 8        # twice the rows of a stack
