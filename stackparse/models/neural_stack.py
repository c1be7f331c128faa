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
- The deep LSTM's layers each read the layer below only, as in [1] (Sutskever et al.). Appendix D's Table 2 hints at
  another network: its 4- and 8-layer counts (2.1e6, 4.5e6 at 256 units; 1.7e7 for 8 layers at 512) are those of
  LSTMs whose every layer also reads the 64-dimensional input (a layer above the first: 4h(h + 64) + 4h h + 4h
  weights), and none of the six deep rows is the count of plain stacked layers (8.5e5, 1.9e6, 4.0e6 at 256), even
  before any embedding or softmax. The text names [1], so the stacked network stays; an input to every layer is
  not built yet.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from stackparse.config import setting
from stackparse.encoders.grefenstette import (
    NeuralDequeEncoder,
    NeuralDequeConfig,
    NeuralMemoryConfig,
    NeuralQueueEncoder,
    NeuralStackEncoder,
    h0_state,
    learned_h0,
)
from stackparse.models.base import EmbeddingConfig, EncoderModel, model_settings, register
from stackparse.models.recurrent import LSTM


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


@register
class DeepLSTM(LSTM):
    name = "deep-lstm"
    description = "Deep LSTM over learned embeddings, the benchmark of Grefenstette et al. 2015 (§4.4)"
    Config = DeepLSTMConfig

    def __init__(self, pc, config: DeepLSTMConfig, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        self.add_embedding()            # after the builder: DyNet draws initial values in creation order
        self.h0 = learned_h0(self.pc, config.hidden, config.layers) if config.learned_h0 else []

    def initial_state(self, batch_size, tensors=None):
        """The learned h_0 of each layer and zero cells (broadcast over the batch), unless `tensors` restore a state."""
        if tensors is None and self.h0:
            tensors = h0_state(self.h0, self.config.hidden)
        return super().initial_state(batch_size, tensors)


class _NeuralMemoryLSTM(EncoderModel):
    """A sequence model around a Grefenstette et al. encoder, reading embedded input symbols."""
    Config = NeuralMemoryModelConfig
    end_names: ClassVar[tuple[str, ...]] = ("",)
    evaluation_batch = 16       # a graph holds every step's memory: ~25 MB per 250-step sequence

    def hidden(self, state):
        return state.output

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
    end_names = (" top", " bottom")
    evaluation_batch = 8        # twice the rows of a stack
