"""DyNet reads its settings once, at its first import; every stackparse entry point passes here first.

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
