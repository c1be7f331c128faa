"""Encoders: each architecture's one implementation, as a DyNet builder that any DyNet model can use.

Arbitrary input vectors in, hidden vectors out, in DyNet's builder idiom (see `base`); the memory's
contents stay inspectable. One module per family (and `tensors`, products shared with the rnn2):
    stack_lstm      StackLSTMEncoder                          (Dyer et al. 2015)
    joulin_mikolov  StackRNNEncoder, ListRNNEncoder           (Joulin & Mikolov 2015)
    grefenstette    NeuralStackEncoder, NeuralQueueEncoder,   (Grefenstette et al. 2015)
                    NeuralDequeEncoder
    nspda           NSPDAEncoder                              (Mali, Ororbia & Giles 2019)
Documentation with runnable examples: docs/encoders.md.
"""
from stackparse.encoders.base import Encoder, EncoderState
from stackparse.encoders.grefenstette import NeuralDequeEncoder, NeuralQueueEncoder, NeuralStackEncoder
from stackparse.encoders.joulin_mikolov import ListRNNEncoder, StackRNNEncoder
from stackparse.encoders.nspda import NSPDAEncoder
from stackparse.encoders.stack_lstm import StackLSTMEncoder, StackLSTMEncoderState

__all__ = ["Encoder", "EncoderState", "ListRNNEncoder", "NSPDAEncoder", "NeuralDequeEncoder", "NeuralQueueEncoder",
           "NeuralStackEncoder", "StackLSTMEncoder", "StackLSTMEncoderState", "StackRNNEncoder"]
