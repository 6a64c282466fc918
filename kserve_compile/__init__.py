"""kserve-compile: KServe's control plane as a pure compiler.

The pipeline reads top to bottom (``pipeline.compile_documents`` runs it; ``api`` is the library surface):

    parse → inputs → default and validate → resolve mode, config and runtime → build each component
          → render workloads (pod webhook inlined) → ingress → emit

Everything below the command line (``cli/``) and the apply loop (``apply/``) is a pure function.
"""

__version__ = "0.1.0"
