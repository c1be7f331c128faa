"""Transition-based dependency parsing on the persistent stack-LSTM.

The parser decodes and trains with DyNet's autobatching, which needs DyNet's memory pre-allocated
(it cannot grow the pools): unless STACKPARSE_DYNET_MEM says otherwise, importing this package
before stackparse reserves `AUTOBATCH_MEMORY` (MB: forward, backward, parameters, scratch). That
fits training on EWT in batches of 32 sentences and decoding its 32 longest sentences at once.
"""
import os

AUTOBATCH_MEMORY = "512,512,256,128"
os.environ.setdefault("STACKPARSE_DYNET_MEM", AUTOBATCH_MEMORY)

import stackparse  # noqa: E402,F401  (configures DyNet before its first import)
