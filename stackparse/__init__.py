"""stackparse: neural networks that learn to use a stack, and the parsers built on them (DyNet)."""
from stackparse.memories import StackLSTM, StackState

__all__ = ["StackLSTM", "StackState"]
