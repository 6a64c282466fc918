"""Options several commands share, spelled once: ``--config``, ``-n/--namespace``, ``--strict``, ``-q``,
``--error-format``, ``--pod-webhook``."""

from enum import Enum
from typing import TYPE_CHECKING

import typer

from .exits import ErrorFormat

if TYPE_CHECKING:
    from ..driver import CompileOptions

CONFIG = typer.Option(
    None, "--config", help="The inferenceservice-config ConfigMap to use instead of KServe's shipped one."
)
NAMESPACE = typer.Option(
    None,
    "-n",
    "--namespace",
    help="Namespace of every namespaced input that names none (default: default); hosts follow.",
)
STRICT = typer.Option(
    False, "--strict", help="Refuse objects that are not KServe inputs instead of passing them through."
)
QUIET = typer.Option(
    False, "-q", "--quiet", help="Print no warnings or notes, and no progress (errors are always printed)."
)
ERROR_FORMAT = typer.Option(ErrorFormat.text, "--error-format", help="text, json or github.")


class PodWebhook(str, Enum):
    inline = "inline"
    cluster = "cluster"


POD_WEBHOOK = typer.Option(
    PodWebhook.inline,
    "--pod-webhook",
    help="inline: write what KServe's pod webhook adds (storage initializer, credentials, agent) into the pod "
    "templates, for clusters without KServe; cluster: KServe's webhook is installed and adds it to the Pods, so the "
    "output is what KServe's controllers create.",
)


def compile_options(
    namespace: str | None, strict: bool = False, pod_webhook: PodWebhook = PodWebhook.inline, **more: object
) -> "CompileOptions":
    """The driver's options from the shared flags (and a command's own, e.g. ``kube_version``, ``trace``)."""
    from ..driver import CompileOptions

    return CompileOptions(namespace=namespace, strict=strict, pod_webhook=pod_webhook.value, **more)  # type: ignore[arg-type]
