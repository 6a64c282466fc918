"""Stage 2, checks: what the API server and the CRDs reject that KServe's own code does not, on every input.

- ``inputs``: the checks the driver runs on every run — unknown fields with a did-you-mean (``suggest``), values
  outside the CRDs' enums (``enums``), the API server's object-meta, quantity and enum rules (``apiserver``), and a
  warning for a deployment mode KServe does not know;
- ``offline``: ``validate``'s schemas on inputs and rendered objects (``schema``: the bundled JSON schemas);
- ``shapes``: the field types of the kinds kept as plain data (LLM services and configs, ClusterStorageContainers),
  from the same schemas, checked on every run;
- ``knative``: Knative's admission of every Knative Service of a run (the pod-spec rules of Knative's webhook in
  ``knative_podspec``) under Knative's ``config-features``: errors in ``validate``, a warning elsewhere.

May import the base modules and ``inputs``.
"""

__all__ = ["apiserver", "enums", "inputs", "knative", "knative_podspec", "offline", "schema", "shapes", "suggest"]
