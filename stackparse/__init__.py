"""stackparse: neural networks that learn to use a stack, and the parsers built on them (DyNet)."""
from stackparse import _dynet  # noqa: F401  (configures DyNet before its first import)
from stackparse.memories import StackLSTM, StackState

__all__ = ["StackLSTM", "StackState"]
