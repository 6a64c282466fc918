"""kserve-compile: KServe's control plane as a pure compiler.

One driver runs the stages in order (``driver.compile``; ``api`` is the library surface):

    inputs (parse, envelope, namespacing, pass-through, config, typing) → checks → plan (default, validate, mode,
    runtime, components) → render (workloads with the pod webhook inlined, ingress) → emit

Beside the flow: the feature packages (``graph``, ``llmisvc``, ``localmodel``, ``migrate``), the base modules every
stage shares (``errors``, ``constants``, ``provenance``, ``kube``, ``gotemplate``, ...), and at the edges the commands
(``cli/``) and the apply loop (``apply/``). Everything between the command line and the apply loop is a pure function.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
