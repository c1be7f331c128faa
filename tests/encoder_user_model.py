"""A tagger written as a user of stackparse would write it, with only public imports and DyNet: one of
the encoders and a softmax layer, itself a DyNet builder, so `dy.save` / `dy.load` take it whole.

tests/test_encoders.py trains one per encoder, saves them, and has a fresh process load them and
predict (`python -c "from tests.encoder_user_model import main; main()" DIRECTORY`).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import stackparse  # before dynet: it configures DyNet
import dynet as dy


class Tagger:
    """Scores n_tags tags at every position of a sequence of vectors.

    Args:
      pc: the ParameterCollection to build on.
      encoder: the name of a stackparse encoder class, e.g. "StackRNNEncoder".
      input_dim, hidden_dim: the encoder's sizes. n_tags: the number of tags.
      options: the encoder's options.
    """

    def __init__(self, pc: dy.ParameterCollection, encoder: str, input_dim: int, hidden_dim: int, n_tags: int,
                 options: dict):
        self.spec = (encoder, input_dim, hidden_dim, n_tags, options)
        self.pc = pc.add_subcollection("tagger")
        self.encoder = getattr(stackparse, encoder)(self.pc, input_dim, hidden_dim, **options)
        self.W = self.pc.add_parameters((n_tags, hidden_dim), name="W")
        self.b = self.pc.add_parameters((n_tags,), init=0.0, name="b")

    def param_collection(self) -> dy.ParameterCollection:
        """DyNet's saving protocol.

        Returns:
          The tagger's sub-collection, the encoder's inside it.
        """
        return self.pc

    @staticmethod
    def from_spec(spec: tuple, pc: dy.ParameterCollection) -> "Tagger":
        """DyNet's saving protocol.

        Args:
          spec: a Tagger's spec. pc: the collection to build on.
        Returns:
          The tagger `spec` describes.
        """
        return Tagger(pc, *spec)

    def scores(self, xs: np.ndarray) -> list[dy.Expression]:
        """Tag scores for a batch of sequences.

        Args:
          xs: (T, input_dim, B) inputs.
        Returns:
          T expressions of (n_tags,) x B.
        """
        batch = xs.shape[2]
        inputs = [dy.inputTensor(x, batched=True) if batch > 1 else dy.inputVector(x[:, 0]) for x in xs]
        return [dy.affine_transform([self.b, self.W, h]) for h in self.encoder.initial_state(batch).transduce(inputs)]

    def loss(self, xs: np.ndarray, tags: np.ndarray) -> dy.Expression:
        """The summed cross-entropy of the tags.

        Args:
          xs: (T, input_dim, B) inputs. tags: (T, B) tag ids.
        Returns:
          A scalar expression.
        """
        return dy.sum_batches(dy.esum([dy.pickneglogsoftmax_batch(s, list(t)) for s, t in zip(self.scores(xs), tags)]))

    def predict(self, xs: np.ndarray) -> np.ndarray:
        """Tag scores as an array.

        Args:
          xs: (T, input_dim, B) inputs.
        Returns:
          (T, n_tags, B) scores.
        """
        dy.renew_cg()
        return np.stack([s.npvalue().reshape(s.dim()[0][0], -1) for s in self.scores(xs)])


def train(tagger: Tagger, trainer: dy.Trainer, xs: np.ndarray, tags: np.ndarray, steps: int) -> list[float]:
    """`steps` updates on one batch.

    Args:
      tagger: the model. trainer: its DyNet trainer. xs: (T, input_dim, B) inputs. tags: (T, B) tag ids.
      steps: the number of updates.
    Returns:
      The loss before each update.
    """
    losses = []
    for _ in range(steps):
        dy.renew_cg()
        loss = tagger.loss(xs, tags)
        losses.append(loss.value())
        loss.backward()
        trainer.update()
    return losses


def main() -> None:
    """Load every `*.model` tagger of the directory given as the first argument and write its predicted
    scores on `inputs.npy` to `<name>.loaded.npy`."""
    directory = Path(sys.argv[1])
    xs = np.load(directory / "inputs.npy")
    for meta in sorted(directory.glob("*.model.meta")):
        basename = str(meta)[:-len(".meta")]
        (tagger,) = dy.load(basename, dy.ParameterCollection())
        np.save(basename.replace(".model", ".loaded.npy"), tagger.predict(xs))
