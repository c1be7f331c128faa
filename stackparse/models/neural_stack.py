"""The memory-enhanced LSTMs of Grefenstette et al. (2015, §3.4) as sequence models, and the deep-LSTM
baseline of their §4.4.

With e(x_t) the embedding of the input symbol (§4: 64 dimensions), the LSTM controller and its memory
(eq. 1-11) are the encoders of `stackparse.encoders.grefenstette`, written there once; the output is
    y_t = softmax(V o_t + c)                                               (SequenceModel.scores)

Choices the paper leaves open, and why:
- One embedding matrix for all input symbols, source and target alike (§4's "separate embedding matrices ... for
  input and output": our outputs are the softmax layer's rows). The deep LSTM reads the same embeddings;
  `embedding` 0 gives one-hot inputs as the other models here.
- The pop bias (`pop_bias`) and the zero h_0: see `stackparse.encoders.grefenstette`.
- Defaults: 64 hidden units and 64-dimensional values (the paper's smaller setting is 256 and 256), so a run trains
  in minutes on one CPU core; with the transduction tasks' default training the stack learns reversal and the
  queue copy at that size.
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
)
from stackparse.models.base import EmbeddingConfig, EncoderModel, model_settings, register
from stackparse.models.recurrent import LSTM


@dataclass(frozen=True)
class TransducerConfig(EmbeddingConfig):
    """Settings shared by the models of Grefenstette et al.'s experiments (64 hidden units: see above)."""
    hidden: int = setting(64, "hidden units", min=1)


NeuralMemoryModelConfig = model_settings("NeuralMemoryModelConfig", NeuralMemoryConfig, TransducerConfig,
                                         memory_size=64)
NeuralDequeModelConfig = model_settings("NeuralDequeModelConfig", NeuralDequeConfig, TransducerConfig, memory_size=64)


@dataclass(frozen=True)
class DeepLSTMConfig(TransducerConfig):
    """The benchmark of §4.4; 2 layers have about as many parameters as the memory models."""
    layers: int = setting(2, "recurrent layers", min=1)


@register
class DeepLSTM(LSTM):
    name = "deep-lstm"
    description = "Deep LSTM over learned embeddings, the benchmark of Grefenstette et al. 2015 (§4.4)"
    Config = DeepLSTMConfig

    def __init__(self, pc, config: DeepLSTMConfig, n_inputs, n_outputs):
        super().__init__(pc, config, n_inputs, n_outputs)
        self.add_embedding()            # after the builder: DyNet draws initial values in creation order


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
