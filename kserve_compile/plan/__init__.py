"""Stage 3, plan: an InferenceService as KServe's controller holds it just before it creates objects.

``isvc.plan_isvc`` runs the steps in order: ``defaulting`` (the mutating webhook), ``admission`` (the validating
webhook), ``mode`` (Standard / Knative), ``components`` (each component with its runtime, chosen by
``runtime_select`` and merged, ``storage_uri`` checked), and in Standard mode ``multinode`` (the head/worker
split) and ``canary``. From a plan alone, without rendering: ``ports`` (each component's Service ports), ``routes``
and ``domain`` (what the ingress builders read, hosts), ``status`` (the URLs KServe reports). Beyond KServe, opt-in:
``scale_to_zero`` (the Standard-mode components KEDA's HTTP add-on scales to zero).

May import the base modules and ``inputs`` — never ``render``.
"""

__all__ = [
    "admission",
    "canary",
    "components",
    "defaulting",
    "domain",
    "isvc",
    "mode",
    "multinode",
    "ports",
    "routes",
    "runtime_select",
    "scale_to_zero",
    "status",
    "storage_uri",
]
