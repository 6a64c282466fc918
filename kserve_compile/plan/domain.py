"""Host names and URL paths KServe derives from the ``ingress`` config (``reconcilers/ingress/domain.go``, ``path.go``).

* :func:`generate_domain_name` renders ``domainTemplate`` over ``{Name, Namespace, IngressDomain, Annotations, Labels}``
  and insists on a fully qualified DNS name.
* :func:`additional_hosts` swaps the matched domain suffix of a host for each ``additionalIngressDomains`` entry.
* :func:`generate_path` renders ``pathTemplate`` over ``{Name, Namespace}`` into a bare URL path.
* :func:`service_hostname` and :func:`host_regexp` are the cluster-local host and the Istio authority regex.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from urllib.parse import unquote

from .. import constants as C
from ..errors import InputError, go_quote
from ..gotemplate import GoTemplate, Struct
from ..inputs.config import IngressConfig

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end "
    "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
# A valid name of at least two labels of at most 63 characters each: no error to report (the common case, checked
# in one match; anything else takes the rule-by-rule path below for KServe's messages).
_VALID_FQDN = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?)+")
# Characters Go's regexp.QuoteMeta escapes (Python's re.escape escapes more, e.g. '-').
_GO_REGEX_SPECIAL = frozenset("\\.+*?()|[]{}^$")


class _DomainTemplateValues(Struct):
    go_type = "ingress.DomainTemplateValues"


class _PathTemplateValues(Struct):
    go_type = "ingress.PathTemplateValues"


def subdomain_errors(name: str) -> list[str]:
    """Kubernetes ``IsDNS1123Subdomain``: the reasons ``name`` is not a valid subdomain (empty when it is)."""
    errors = []
    if len(name) > 253:
        errors.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(name):
        errors.append(_SUBDOMAIN_MSG)
    return errors


def _fqdn_errors(name: str) -> list[str]:
    """Kubernetes ``IsFullyQualifiedDomainName`` on field ``url``, each error formatted as Go's field.Error."""
    if not name:
        return ["url: Required value"]
    trimmed = name[:-1] if name.endswith(".") else name
    if len(trimmed) <= 253 and _VALID_FQDN.fullmatch(trimmed):
        return []

    def invalid(value: str, detail: str) -> str:
        return f"url: Invalid value: {go_quote(value)}: {detail}"

    sub = subdomain_errors(trimmed)
    if sub:
        return [invalid(trimmed, e) for e in sub]
    labels = trimmed.split(".")
    if len(labels) < 2:
        return [invalid(trimmed, "should be a domain with at least two segments separated by dots")]
    errors = []
    for label in labels:
        if len(label) > 63:
            errors.append(invalid(label, "must be no more than 63 characters"))
        if not _DNS1123_LABEL.fullmatch(label):
            errors.append(invalid(label, _LABEL_MSG))
    return errors


def _aggregate(errors: list[str]) -> str:
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def generate_domain_name(
    name: str,
    namespace: str,
    ingress: IngressConfig,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> str:
    """The host for ``name`` from ``domainTemplate``; labels/annotations are the owning object's metadata."""
    try:
        template = GoTemplate(ingress.domain_template, name="domain-template")
    except ValueError as exc:
        raise InputError(f"unable to parse the domain template {go_quote(ingress.domain_template)}: {exc}") from None
    data = _DomainTemplateValues(
        Name=name,
        Namespace=namespace,
        IngressDomain=ingress.ingress_domain,
        Annotations=dict(annotations or {}),
        Labels=dict(labels or {}),
    )
    try:
        host = template.render(data)
    except ValueError as exc:
        raise InputError(f"error rendering the domain template: {exc}") from None
    errors = _fqdn_errors(host)
    if errors:
        raise InputError(f"invalid domain name {go_quote(host)}: {_aggregate(errors)}", "")
    return host


def additional_hosts(domains: Iterable[str], service_host: str, ingress: IngressConfig) -> list[str]:
    """``GetAdditionalHosts``: ``service_host`` minus the first of ``domains`` it ends with, plus each additional
    domain.

    Duplicates are dropped; a host that is not a valid DNS subdomain is skipped (KServe only logs it).
    """
    subdomain = ""
    for domain in domains:
        if service_host.endswith(domain):
            subdomain = service_host[: len(service_host) - len(domain)]
            break
    extra = ingress.additional_ingress_domains or []
    if not subdomain or not extra:
        return []
    hosts: list[str] = []
    seen: set[str] = set()
    for domain in extra:
        if domain in seen:
            continue
        host = subdomain + domain
        if subdomain_errors(host):
            continue
        hosts.append(host)
        seen.add(domain)
    return hosts


def generate_path(name: str, namespace: str, ingress: IngressConfig) -> str:
    """``GenerateUrlPath``: the rendered ``pathTemplate`` as a URL path ("" when no template is configured)."""
    if not ingress.path_template:
        return ""
    try:
        template = GoTemplate(ingress.path_template, name="url-template")
        rendered = template.render(_PathTemplateValues(Name=name, Namespace=namespace))
    except ValueError as exc:
        raise InputError(f"error rendering the url template: {exc}", "") from None
    return _request_uri_path(rendered)


def _request_uri_path(raw: str) -> str:
    """The path Go's ``url.ParseRequestURI`` yields, with KServe's rejection of a scheme or host."""

    def invalid(reason: str) -> InputError:
        return InputError(f"invalid url {go_quote(raw)}: parse {go_quote(raw)}: {reason}", "")

    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in raw):
        raise invalid("net/url: invalid control character in URL")
    if not raw:
        raise invalid("empty url")
    scheme_match = re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", raw)
    if raw.startswith(":"):
        raise invalid("missing protocol scheme")
    if scheme_match:
        raise InputError(f"invalid url path {go_quote(raw)}: contains either a scheme or a host", "")
    if not raw.startswith("/"):
        raise invalid("invalid URI for request")
    path = raw.split("?", 1)[0]
    bad_escape = re.search(r"%(?![0-9A-Fa-f]{2})(.{0,2})", path)
    if bad_escape:
        raise invalid(f"invalid URL escape {go_quote('%' + bad_escape.group(1))}")
    return unquote(path)


def service_hostname(name: str, namespace: str) -> str:
    """The in-cluster DNS name of Service ``name`` (knative ``network.GetServiceHostname``)."""
    return f"{name}.{namespace}.svc.{C.CLUSTER_DOMAIN}"


def go_quote_meta(text: str) -> str:
    """Go's ``regexp.QuoteMeta``."""
    return "".join("\\" + ch if ch in _GO_REGEX_SPECIAL else ch for ch in text)


def host_regexp(host: str) -> str:
    """``constants.HostRegExp``: the host, regex-quoted, with an optional ``:port``, anchored at both ends.

    KServe also has a branch meant to make ``.svc.cluster.local`` optional for cluster-local hosts, but it tests for
    a suffix that contains a literal ``(?i)``, which no real host has, so only this form is ever produced.
    """
    return "^" + go_quote_meta(host) + C.HOST_PORT_REGEX + "$"
