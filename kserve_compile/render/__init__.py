"""Every object builder, by what it builds: pure functions from typed, planned components to Kubernetes objects.

- ``workloads/``: Standard mode (``standard/``: Deployment, Service, HPA/KEDA, OpenTelemetryCollector), Knative
  mode (``knative/``: the Knative Service), and the Standard-mode extras beside them (``canary``, ``multinode``).
- ``pod_webhook/``: what KServe's pod mutating webhook adds at Pod admission, inlined into pod templates
  (storage initializer, credentials, modelcar, agent, metrics aggregation).
- ``ingress/``: Kubernetes Ingress, Gateway API HTTPRoutes, Istio VirtualService, hosts and the status URLs.
"""
