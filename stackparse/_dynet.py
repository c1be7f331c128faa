"""DyNet reads its settings once, at its first import; every stackparse entry point passes here first.

Autobatching (used by the parser) cannot grow DyNet's memory pools on demand, so they are
pre-allocated: forward, backward, parameter and scratch pools in MB, overridable with
STACKPARSE_DYNET_MEM. DyNet touches all of it, so every process pays the total: 1.4 GB fits parser
training on EWT (batches of 32 sentences) and decoding its 32 longest training sentences at once.
If the user's program imported dynet already, its own settings stand.
"""
import os
import sys

if "dynet" not in sys.modules:
    import dynet_config

    dynet_config.set(mem=os.environ.get("STACKPARSE_DYNET_MEM", "512,512,256,128"), random_seed=1)
