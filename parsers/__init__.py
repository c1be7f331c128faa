"""Transition-based dependency parsing on the persistent stack-LSTM."""
import stackparse  # noqa: F401  (configures DyNet before its first import)
