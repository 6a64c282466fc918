"""KServe's pod mutating webhook (``pkg/webhook/admission/pod/``), inlined into pod templates: ``inject`` runs the
injectors in KServe's order — storage initializer (``storage``, ``credentials``, ``modelcar``), agent sidecar
(``agent``), metrics aggregation (``metrics_aggregation``); ``pod_edits`` holds the pod-spec helpers they share."""

__all__ = ["agent", "credentials", "inject", "metrics_aggregation", "modelcar", "storage"]
