"""Standard-mode routing (HTTPRoutes or a Kubernetes Ingress) and the URLs KServe reports in status.

Sources: ``reconcilers/ingress/httproute_reconciler.go``, ``kube_ingress_reconciler.go`` and
``reconcilers/raw/raw_kube_reconciler.go`` (component URLs). The steady state is assumed: every component is Ready.
"""

from __future__ import annotations

from ...inputs.config import KServeConfig
from ...plan.routes import RouteInput, standard_is_internal
from .httproute import http_routes
from .kube_ingress import kube_ingress


def standard_ingress(route: RouteInput, config: KServeConfig, *, ready_canaries: bool = False) -> list[dict]:
    """The HTTPRoutes (``enableGatewayApi``) or the Ingress KServe's Standard mode creates for ``route``.

    ``ready_canaries`` says whether the canaries in ``route.canaries`` are Ready (only a live daemon knows); KServe
    gives traffic only to Ready canaries, so offline they get no backend.
    """
    route.predictor  # noqa: B018 - a predictor is required; raises a located error otherwise
    if config.ingress.disable_ingress_creation or standard_is_internal(route, config) or route.stopped:
        return []
    if config.ingress.enable_gateway_api:
        return http_routes(route, config, ready_canaries=ready_canaries)
    return [kube_ingress(route, config)]
