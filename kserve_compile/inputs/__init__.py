"""Stage 1, inputs: a run's documents read, checked for shape, sorted and typed — everything the compiler reads.

- ``parse``: files, directories and stdin into located documents (``Document``: data, file, line and column of
  every node); ``gather``: the one way commands and the daemon assemble a run (``--config``, live objects).
- ``envelope``: ``apiVersion``, ``kind`` and ``metadata`` of the right types, before any stage reads them;
  ``namespacing``: ``-n`` and the API server's defaulting of an unset namespace.
- ``kinds``: the kinds a run reads (the core table; the features add theirs through the driver) and the one
  unsupported-kind message; ``passthrough``: compiled, passed through, or skipped.
- ``config``: the ``inferenceservice-config`` ConfigMap as KServe parses it (``isvc_compile``: ``isvcCompile``, the
  key kserve-compile defines there); ``defaults``: KServe's shipped ConfigMap, runtimes and storage containers;
  ``cluster_state``: the live objects the pod webhook reads; ``knative_features``: Knative's ``config-features``
  (given, or Knative's shipped one).
- ``serving_types``: InferenceService and ServingRuntime, typed; ``typed``: a document as its model, with located
  problems; ``runtime_webhook``: KServe's ServingRuntime webhook; ``context``: the typed run.

May import only the base modules (``errors``, ``constants``, ``provenance``, ``kube``, ``gotemplate``, ...): never a
later stage or a feature package.
"""

__all__ = [
    "cluster_state",
    "config",
    "context",
    "defaults",
    "envelope",
    "gather",
    "isvc_compile",
    "kinds",
    "knative_features",
    "namespacing",
    "parse",
    "passthrough",
    "runtime_webhook",
    "serving_types",
    "typed",
]
