"""Ingress (``pkg/controller/v1beta1/inferenceservice/reconcilers/ingress/``): ``standard`` picks ``kube_ingress``
(Ingress) or ``httproute`` (Gateway API) for Standard mode; ``virtualservice`` is Knative mode's Istio
VirtualService. What they read of a plan (routes, hosts, status URLs) is planned in ``plan.routes``,
``plan.domain`` and ``plan.status``. Beyond KServe, opt-in: ``interceptor`` points Standard-mode routes at KEDA's HTTP
add-on (``plan.scale_to_zero``)."""

__all__ = ["httproute", "interceptor", "kube_ingress", "standard", "virtualservice"]
