"""Stack memories: values with a pure update, usable inside any DyNet model."""
from stackparse.memories.stack_lstm import StackLSTM, StackState

__all__ = ["StackLSTM", "StackState"]
