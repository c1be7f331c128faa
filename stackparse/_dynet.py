"""DyNet reads its settings once, at its first import; every stackparse entry point passes here first.
It also holds `product`, the matrix product that the library uses instead of DyNet's `a * b`.

Memory is chosen per use. DyNet's pools normally grow on demand, so the library starts small
(`LIBRARY_MEMORY`) and a program that embeds an encoder pays only what its graphs need. Autobatching
(the parser's) cannot grow them: DyNet refuses with an error, so the parser wing
(`parsers/__init__.py`) asks for pre-allocated pools before it imports stackparse. Either way
STACKPARSE_DYNET_MEM (MB: one number, or `forward,backward,parameters,scratch`) overrides the
default; docs/encoders.md says more. If the user's program imported dynet already, its own settings
stand.
"""
import os
import sys

LIBRARY_MEMORY = "128"
"""Initial pools (MB) when nothing asks for more: they grow as graphs need, without autobatching."""

if "dynet" not in sys.modules:
    import dynet_config

    dynet_config.set(mem=os.environ.get("STACKPARSE_DYNET_MEM", LIBRARY_MEMORY), random_seed=1)

import dynet as dy  # noqa: E402  (after the configuration above)


def product(a: dy.Expression, b: dy.Expression) -> dy.Expression:
    """The matrix product a b, as `a * b` means it, computed without reading stale memory.

    DyNet's own `a * b` (this build, on the CPU) reads its output's memory before writing it, as
    0 * old + a b: a NaN or an infinity that an earlier graph left in the memory pool (the parser's
    restricted log-softmax leaves -inf) turns the product into NaN, silently, in whatever model runs
    next in the same process. `affine_transform` starts from its bias instead: with a zero bias the
    values are those of `a * b`, to the bit (tests/test_dynet_memory.py).
    """
    (rows, *_), _ = a.dim()
    (_, *columns), _ = b.dim()
    return dy.affine_transform([dy.zeros((rows, *columns)), a, b])
