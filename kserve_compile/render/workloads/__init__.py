"""Workloads: Standard mode (``standard/``), Knative mode (``knative/``), and the multi-node worker objects
(``multinode``; the head/worker split is planned in ``plan.multinode``). Mirrors
``pkg/controller/v1beta1/inferenceservice/reconcilers/``."""

__all__ = ["knative", "multinode", "standard"]
