"""Stage 4, render: pure functions from a plan to Kubernetes objects, by what they build.

- ``isvc``: one planned InferenceService — workloads, its modelconfig ConfigMap, ingress; ``ca_bundle``: the
  CA-bundle copies; ``skeletons``: fixed object shapes as data (``kserve_compile/templates/``).
- ``workloads/``: Standard mode (``standard/``: Deployment, Service, HPA/KEDA, OpenTelemetryCollector), Knative
  mode (``knative/``: the Knative Service), and the multi-node worker objects (``multinode``).
- ``pod_webhook/``: what KServe's pod mutating webhook adds at Pod admission, inlined into pod templates
  (storage initializer, credentials, modelcar, agent, metrics aggregation).
- ``ingress/``: Kubernetes Ingress, Gateway API HTTPRoutes, the Istio VirtualService.

May import the base modules, ``inputs`` and ``plan``.
"""

__all__ = ["ca_bundle", "ingress", "isvc", "pod_webhook", "skeletons", "workloads"]
