"""Sequence models behind one interface; importing this package registers them all."""
from stackparse.models.base import MODELS, ModelConfig, SequenceModel, get_model_class, register
from stackparse.models import recurrent, stack_rnn  # noqa: F401  (registers rnn, lstm, gru, stack-rnn, list-rnn)
from stackparse.models import neural_stack  # noqa: F401  (registers neural-stack, -queue, -deque, deep-lstm)
from stackparse.models import nnpda, nspda, second_order  # noqa: F401  (registers rnn2, nspda2, nspda3, nnpda)
from stackparse.models import multiplicative  # noqa: F401  (registers mi-rnn, mi-lstm, mi-gru)

__all__ = ["MODELS", "ModelConfig", "SequenceModel", "get_model_class", "register"]
