"""Workloads: Standard mode (``standard/``), Knative mode (``knative/``), and Standard mode's canary and multi-node
extras (``canary``, ``multinode``). Mirrors ``pkg/controller/v1beta1/inferenceservice/reconcilers/``."""
