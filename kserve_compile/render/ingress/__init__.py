"""Ingress and status URLs (``pkg/controller/v1beta1/inferenceservice/reconcilers/ingress/``): ``route`` is what
every builder reads; ``standard`` picks ``kube_ingress`` (Ingress) or ``httproute`` (Gateway API) and computes
Standard mode's status URLs; ``virtualservice`` is Knative mode's Istio VirtualService and status; ``domain``
builds hosts from the domain template."""
