"""Host names, additional hosts, URL paths and authority regexes (KServe reconcilers/ingress/domain.go, path.go)."""

from __future__ import annotations

import json
import re

import pytest

from kserve_compile.errors import InputError
from kserve_compile.inputs.config import IngressConfig, parse_config
from kserve_compile.plan.domain import (
    additional_hosts,
    generate_domain_name,
    generate_path,
    go_quote_meta,
    host_regexp,
    service_hostname,
)

LABELS = {"label": "label-value"}
ANNOTATIONS = {"annotation": "annotation-value"}


def ingress(**fields: object) -> IngressConfig:
    base = {"ingressGateway": "knative-serving/knative-ingress-gateway"}
    return parse_config({"ingress": json.dumps({**base, **fields})}).ingress


# Ported from KServe domain_test.go:28-155 (TestGenerateDomainName); object "model" in namespace "test".
@pytest.mark.parametrize(
    ("template", "expected"),
    [
        (None, "model-test.example.com"),
        ("{{ .Name }}.{{ .Namespace }}.{{ .IngressDomain }}", "model.test.example.com"),
        (
            "{{ .Name }}.{{ .Namespace }}.{{ .Annotations.annotation }}.{{ .IngressDomain }}",
            "model.test.annotation-value.example.com",
        ),
        ("{{ .Name }}.{{ .Namespace }}.{{ .Labels.label }}.{{ .IngressDomain }}", "model.test.label-value.example.com"),
    ],
)
def test_generate_domain_name(template: str | None, expected: str) -> None:
    cfg = ingress(**({"domainTemplate": template} if template else {}))
    assert generate_domain_name("model", "test", cfg, LABELS, ANNOTATIONS) == expected


def test_unknown_template_field_is_an_error() -> None:
    cfg = ingress(domainTemplate="{{ .ModelName }}.{{ .Namespace }}.{{ .IngressDomain }}")
    with pytest.raises(InputError, match="error rendering the domain template"):
        generate_domain_name("model", "test", cfg, LABELS, ANNOTATIONS)


def test_invalid_domain_name_is_an_error_with_kserve_wording() -> None:
    cfg = ingress(domainTemplate="{{ .Name }}_{{ .Namespace }}_{{ .IngressDomain }}")
    with pytest.raises(InputError) as info:
        generate_domain_name("model", "test", cfg, LABELS, ANNOTATIONS)
    assert info.value.message.startswith('invalid domain name "model_test_example.com": url: Invalid value:')
    assert "RFC 1123 subdomain" in info.value.message
    assert info.value.path == ""


def test_missing_map_key_renders_no_value_and_fails_validation() -> None:
    cfg = ingress(domainTemplate="{{ .Name }}.{{ .Labels.absent }}.{{ .IngressDomain }}")
    with pytest.raises(InputError, match=r'invalid domain name "model\.<no value>\.example\.com"'):
        generate_domain_name("model", "test", cfg)


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("localhost", "at least two segments"),
        ("a" * 64 + ".example.com", "no more than 63 characters"),
        ("", "Required value"),
    ],
)
def test_fqdn_rules(host: str, reason: str) -> None:
    cfg = ingress(domainTemplate=host or "{{ .IngressDomain }}", ingressDomain="x.y")
    if not host:
        cfg = cfg.model_copy(update={"ingress_domain": ""})
    with pytest.raises(InputError, match=reason):
        generate_domain_name("model", "test", cfg)


def test_trailing_dot_is_accepted_and_kept() -> None:
    cfg = ingress(domainTemplate="{{ .Name }}.example.com.")
    assert generate_domain_name("model", "test", cfg) == "model.example.com."


# Ported from KServe domain_test.go:157-262 (TestGetAdditionalHosts).
@pytest.mark.parametrize(
    ("domains", "additional", "expected"),
    [
        ([], ["secondary.com"], []),
        (["example.com"], None, []),
        (["example.com"], [], []),
        (["other.com"], ["secondary.com"], []),
        (["example.com"], ["secondary.com"], ["model-test.secondary.com"]),
        (["example.com"], ["secondary.com", "tertiary.com"], ["model-test.secondary.com", "model-test.tertiary.com"]),
        (
            ["example.com"],
            ["secondary.com", "secondary.com", "tertiary.com"],
            ["model-test.secondary.com", "model-test.tertiary.com"],
        ),
        (["example.com"], ["invalid_domain", "secondary.com"], ["model-test.secondary.com"]),
        (
            ["example.org", "example.com", "example.net"],
            ["secondary.com", "tertiary.com"],
            ["model-test.secondary.com", "model-test.tertiary.com"],
        ),
    ],
)
def test_additional_hosts(domains: list[str], additional: list[str] | None, expected: list[str]) -> None:
    cfg = ingress(**({"additionalIngressDomains": additional} if additional is not None else {}))
    assert additional_hosts(domains, "model-test.example.com", cfg) == expected


# Ported from KServe path_test.go:26-127 (TestGenerateUrlPath), plus query/escape handling of url.ParseRequestURI.
@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("", ""),
        ("/path/to/{{ .Namespace }}/{{ .Name }}", "/path/to/user/model"),
        ("/serving/{{ .Namespace }}/{{ .Name }}/", "/serving/user/model/"),
        ("/a%20b/{{ .Name }}?x=1", "/a b/model"),
    ],
)
def test_generate_path(template: str, expected: str) -> None:
    cfg = ingress(**({"pathTemplate": template, "ingressDomain": "my.domain"} if template else {}))
    assert generate_path("model", "user", cfg) == expected


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("/{{{ .Name }}-{{ .Namespace }}.{{ .IngressDomain }}", "error rendering the url template"),
        ("/{{ .Unknownfield }}/serving/{{ .Namespace }}/{{ .Name }}", "error rendering the url template"),
        (
            "myhost/serving/{{ .Namespace }}/{{ .Name }}",
            'invalid url "myhost/serving/user/model": parse "myhost/serving/user/model": invalid URI for request',
        ),
        (
            "http://myhost/serving/{{ .Namespace }}/{{ .Name }}",
            'invalid url path "http://myhost/serving/user/model": contains either a scheme or a host',
        ),
        ("/{{ .Name }}/%zz", 'invalid URL escape "%zz"'),
    ],
)
def test_generate_path_errors(template: str, message: str) -> None:
    # model_copy: the ConfigMap parser already rejects unparsable templates; generate_path must not rely on it.
    cfg = ingress(ingressDomain="my.domain").model_copy(update={"path_template": template})
    with pytest.raises(InputError, match=re.escape(message)):
        generate_path("model", "user", cfg)


def test_service_hostname() -> None:
    assert service_hostname("foo-predictor", "ns") == "foo-predictor.ns.svc.cluster.local"


def test_host_regexp_matches_host_with_optional_port_only() -> None:
    # KServe constants.HostRegExp; the cluster-local branch is unreachable (controlplane.md §7.2).
    regex = host_regexp("foo.default.svc.cluster.local")
    assert regex == r"^foo\.default\.svc\.cluster\.local(?::\d{1,5})?$"
    assert re.match(regex, "foo.default.svc.cluster.local:8080")
    assert not re.match(regex, "foo.default")
    assert not re.match(regex, "fooXdefault.svc.cluster.local")


def test_go_quote_meta_leaves_dashes_alone() -> None:
    assert go_quote_meta("a-b.c*d") == r"a-b\.c\*d"
