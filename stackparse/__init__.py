"""stackparse: neural networks that learn to use a stack, and the parsers built on them (DyNet)."""
from stackparse import _dynet  # noqa: F401  (configures DyNet before its first import)
from stackparse.encoders import (ListRNNEncoder, NeuralDequeEncoder, NeuralQueueEncoder, NeuralStackEncoder,
                                 NSPDAEncoder, StackLSTMEncoder, StackRNNEncoder)
from stackparse.memories import StackLSTM, StackState

__all__ = ["ListRNNEncoder", "NSPDAEncoder", "NeuralDequeEncoder", "NeuralQueueEncoder", "NeuralStackEncoder",
           "StackLSTM", "StackLSTMEncoder", "StackRNNEncoder", "StackState"]
