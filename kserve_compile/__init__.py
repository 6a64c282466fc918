"""kserve-compile: KServe's control plane as a pure compiler.

The pipeline reads top to bottom:

    parse → default and validate → resolve mode, config and runtime → build components → ingress → emit

``kserve_compile.render.render`` runs it; everything below it is a pure function.
"""

__version__ = "0.1.0"
