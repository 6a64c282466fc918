"""Kubernetes data as KServe's Go code handles it, shared by every stage (a base package: it imports no stage).

``quantity`` (``resource.Quantity``, parsed exactly), ``merge`` (strategic merge patch for Container and PodSpec,
mergo's override), ``shapes`` (the core fields an InferenceService inlines, as a table), ``fields`` (small helpers
over object data, field paths), ``validation`` (the checks both of KServe's admission webhooks make), ``paths``
(``FindCommonParentPath``).
"""

__all__ = ["fields", "merge", "paths", "quantity", "shapes", "validation"]
