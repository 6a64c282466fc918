"""Whole Knative Services for InferenceServices, transcribed from KServe's controller tests.

Source: ``pkg/controller/v1beta1/inferenceservice/controller_test.go`` (envtest: no pod webhook runs, so the
expected templates carry no storage-initializer — the component pod spec is passed as is). KServe's tests compare
``spec`` only; these compare the whole object. Test config: ``suite_test.go:117-156`` (getKnativeTestConfigs), which
has the ``inferenceService`` key but no ``security`` key, so ``automountServiceAccountToken: false`` is defaulted.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kserve_compile.inputs.config import KServeConfig, parse_config
from kserve_compile.inputs.defaults import embedded_runtimes
from kserve_compile.inputs.serving_types import InferenceService, ServingRuntime
from kserve_compile.plan.components import Component
from kserve_compile.plan.isvc import plan_isvc
from kserve_compile.render.workloads.knative import knative_service

RESOURCES = {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}  # tests_common.go:52
STORAGE_URI = "s3://test/mnist/export"
SOURCE_URI = "internal.serving.kserve.io/storage-initializer-sourceuri"
KPA = {"autoscaling.knative.dev/class": "kpa.autoscaling.knative.dev"}
# the predictor of controller_test.go:484-493 (legacy tensorflow field, default resources; KServe names the
# container there, which its webhook would reject — the controller test runs without webhooks)
TF_114 = {"storageUri": STORAGE_URI, "runtimeVersion": "1.14.0", "resources": RESOURCES}
TF_ARGS = ["--port=9000", "--rest_api_port=8080", "--model_base_path=/mnt/models", "--rest_api_timeout_in_ms=60000"]


def suite_config(**extra: Any) -> KServeConfig:
    """suite_test.go:117-151 (getBaseTestConfigs)."""
    data = {
        "explainers": json.dumps({"art": {"image": "kserve/art-explainer", "defaultImageVersion": "latest"}}),
        "ingress": json.dumps(
            {
                "kserveIngressGateway": "kserve/kserve-ingress-gateway",
                "ingressGateway": "knative-serving/knative-ingress-gateway",
                "localGateway": "knative-serving/knative-local-gateway",
                "localGatewayService": "knative-local-gateway.istio-system.svc.cluster.local",
            }
        ),
        "deploy": json.dumps({"defaultDeploymentMode": "Knative"}),
        "inferenceService": "{}",
        **{k: json.dumps(v) for k, v in extra.items()},
    }
    return parse_config(data)


def tf_runtime(
    labels: dict | None = None, annotations: dict | None = None, pull_secrets: list | None = None
) -> ServingRuntime:
    """tests_common.go:90-120 (getServingRuntime "tf-serving"), optionally with pod labels/annotations/secrets."""
    spec: dict[str, Any] = {
        "supportedModelFormats": [{"name": "tensorflow", "version": "1", "autoSelect": True}],
        "containers": [
            {
                "name": "kserve-container",
                "image": "tensorflow/serving:1.14.0",
                "command": ["/usr/bin/tensorflow_model_server"],
                "args": list(TF_ARGS),
                "resources": copy.deepcopy(RESOURCES),
            }
        ],
        "disabled": False,
    }
    if labels:
        spec["labels"] = labels
    if annotations:
        spec["annotations"] = annotations
    if pull_secrets:
        spec["imagePullSecrets"] = pull_secrets
    return ServingRuntime.model_validate(
        {
            "apiVersion": "serving.kserve.io/v1alpha1",
            "kind": "ServingRuntime",
            "metadata": {"name": "tf-serving", "namespace": "default"},
            "spec": spec,
        }
    )


def render(isvc_doc: dict, runtime: ServingRuntime, config: KServeConfig | None = None, **kw: Any) -> dict[str, dict]:
    """Every component's Knative Service, keyed by component kind."""
    config = config or suite_config()
    isvc = InferenceService.model_validate(
        {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", **isvc_doc}
    )
    plan = plan_isvc(isvc, config, [*embedded_runtimes(), runtime])
    out = {}
    for c in plan.components:
        assert isinstance(c, Component)
        out[c.kind] = knative_service(c, c.pod_spec, plan.isvc.metadata.annotations, config, **kw)
    return out


def tf_container(version: str, name: str) -> dict:
    return {
        "name": "kserve-container",
        "image": f"tensorflow/serving:{version}",
        "command": ["/usr/bin/tensorflow_model_server"],
        "args": list(TF_ARGS),
        "env": [{"name": "INFERENCE_SERVICE_NAME", "value": name}],
        "resources": RESOURCES,
    }


KNATIVE_MODE = {"serving.kserve.io/deploymentMode": "Knative"}
DEFAULT_TRAFFIC = [{"latestRevision": True, "percent": 100}]


def test_predictor_with_runtime_labels_and_annotations() -> None:
    """controller_test.go:425-610: labels/annotations priority predictor > isvc > ServingRuntime; SR pull secret."""
    triple = {"key1": "val1FromSR", "key2": "val2FromSR", "key3": "val3FromSR"}
    runtime = tf_runtime(triple, triple, [{"name": "sr-image-pull-secret"}])
    isvc = {
        "metadata": {
            "name": "foo",
            "namespace": "default",
            "labels": {"key2": "val2FromISVC", "key3": "val3FromISVC"},
            "annotations": {
                "serving.kserve.io/deploymentMode": "Knative",
                "key2": "val2FromISVC",
                "key3": "val3FromISVC",
            },
        },
        "spec": {
            "predictor": {
                "minReplicas": 1,
                "maxReplicas": 3,
                "labels": {"key3": "val3FromPredictor"},
                "annotations": {"key3": "val3FromPredictor"},
                "tensorflow": TF_114,
            }
        },
    }
    labels = {
        "component": "predictor",
        "serving.kserve.io/inferenceservice": "foo",
        "key1": "val1FromSR",
        "key2": "val2FromISVC",
        "key3": "val3FromPredictor",
    }
    assert render(isvc, runtime) == {
        "predictor": {
            "apiVersion": "serving.knative.dev/v1",
            "kind": "Service",
            "metadata": {"name": "foo-predictor", "namespace": "default", "labels": labels},
            "spec": {
                "template": {
                    "metadata": {
                        "labels": labels,
                        "annotations": {
                            "serving.kserve.io/deploymentMode": "Knative",
                            SOURCE_URI: STORAGE_URI,
                            "autoscaling.knative.dev/max-scale": "3",
                            "autoscaling.knative.dev/min-scale": "1",
                            **KPA,
                            "key1": "val1FromSR",
                            "key2": "val2FromISVC",
                            "key3": "val3FromPredictor",
                        },
                    },
                    "spec": {
                        "imagePullSecrets": [{"name": "sr-image-pull-secret"}],
                        "containers": [tf_container("1.14.0", "foo")],
                        "automountServiceAccountToken": False,
                    },
                },
                "traffic": DEFAULT_TRAFFIC,
            },
        }
    }


def _transformer_isvc() -> dict:
    """controller_test.go:1838-1900: a TF predictor and a custom transformer, each with labels/annotations."""
    return {
        "metadata": {
            "name": "svc-with-transformer",
            "namespace": "default",
            "labels": {"key1": "val1FromISVC", "key2": "val2FromISVC"},
            "annotations": {
                "serving.kserve.io/deploymentMode": "Knative",
                "key1": "val1FromISVC",
                "key2": "val2FromISVC",
            },
        },
        "spec": {
            "predictor": {
                "minReplicas": 1,
                "maxReplicas": 3,
                "labels": {"key2": "val2FromPredictor"},
                "annotations": {"key2": "val2FromPredictor"},
                "tensorflow": {"storageUri": STORAGE_URI, "runtimeVersion": "1.13.0"},
            },
            "transformer": {
                "minReplicas": 1,
                "maxReplicas": 3,
                "labels": {"key2": "val2FromTransformer"},
                "annotations": {"key2": "val2FromTransformer"},
                "containers": [{"image": "transformer:v1", "resources": RESOURCES}],
            },
        },
    }


def test_transformer() -> None:
    """controller_test.go:1928-1985: the transformer ksvc — default args appended, no storage annotation."""
    labels = {
        "serving.kserve.io/inferenceservice": "svc-with-transformer",
        "component": "transformer",
        "key1": "val1FromISVC",
        "key2": "val2FromTransformer",
    }
    assert render(_transformer_isvc(), tf_runtime())["transformer"] == {
        "apiVersion": "serving.knative.dev/v1",
        "kind": "Service",
        "metadata": {"name": "svc-with-transformer-transformer", "namespace": "default", "labels": labels},
        "spec": {
            "template": {
                "metadata": {
                    "labels": labels,
                    "annotations": {
                        "serving.kserve.io/deploymentMode": "Knative",
                        **KPA,
                        "autoscaling.knative.dev/max-scale": "3",
                        "autoscaling.knative.dev/min-scale": "1",
                        "key1": "val1FromISVC",
                        "key2": "val2FromTransformer",
                    },
                },
                "spec": {
                    "containers": [
                        {
                            "image": "transformer:v1",
                            "args": [
                                "--model_name",
                                "svc-with-transformer",
                                "--predictor_host",
                                "svc-with-transformer-predictor.default",
                                "--http_port",
                                "8080",
                            ],
                            "name": "kserve-container",
                            "env": [{"name": "INFERENCE_SERVICE_NAME", "value": "svc-with-transformer"}],
                            "resources": RESOURCES,
                        }
                    ],
                    "automountServiceAccountToken": False,
                },
            },
            "traffic": DEFAULT_TRAFFIC,
        },
    }


def test_transformer_isvc_predictor_gets_its_own_labels() -> None:
    """The predictor of the same isvc: predictor label/annotation values win over the isvc's."""
    predictor = render(_transformer_isvc(), tf_runtime())["predictor"]
    template = predictor["spec"]["template"]
    assert template["metadata"]["labels"]["key2"] == "val2FromPredictor"
    assert template["metadata"]["annotations"]["key2"] == "val2FromPredictor"
    assert template["metadata"]["annotations"][SOURCE_URI] == STORAGE_URI
    assert template["spec"]["containers"] == [tf_container("1.13.0", "svc-with-transformer")]


def test_collocated_transformer_container() -> None:
    """controller_test.go:2186-2325: a transformer-container in the predictor pod, both containers get the env."""
    isvc = {
        "metadata": {
            "name": "isvc-with-collocated-transformer",
            "namespace": "default",
            "labels": {"key1": "val1FromISVC", "key2": "val2FromISVC"},
            "annotations": {
                "serving.kserve.io/deploymentMode": "Knative",
                "key1": "val1FromISVC",
                "key2": "val2FromISVC",
            },
        },
        "spec": {
            "predictor": {
                "minReplicas": 1,
                "maxReplicas": 3,
                "model": {"modelFormat": {"name": "tensorflow"}, "storageUri": STORAGE_URI, "runtimeVersion": "1.13.0"},
                "containers": [
                    {
                        "name": "transformer-container",
                        "image": "transformer:v1",
                        "resources": RESOURCES,
                        "ports": [{"containerPort": 8060}],
                    }
                ],
            }
        },
    }
    name = "isvc-with-collocated-transformer"
    labels = {
        "component": "predictor",
        "serving.kserve.io/inferenceservice": name,
        "key1": "val1FromISVC",
        "key2": "val2FromISVC",
    }
    assert render(isvc, tf_runtime())["predictor"]["spec"] == {
        "template": {
            "metadata": {
                "labels": labels,
                "annotations": {
                    "serving.kserve.io/deploymentMode": "Knative",
                    SOURCE_URI: STORAGE_URI,
                    "autoscaling.knative.dev/max-scale": "3",
                    "autoscaling.knative.dev/min-scale": "1",
                    **KPA,
                    "key1": "val1FromISVC",
                    "key2": "val2FromISVC",
                },
            },
            "spec": {
                "containers": [
                    tf_container("1.13.0", name),
                    {
                        "name": "transformer-container",
                        "image": "transformer:v1",
                        "env": [{"name": "INFERENCE_SERVICE_NAME", "value": name}],
                        "resources": RESOURCES,
                        "ports": [{"containerPort": 8060}],
                    },
                ],
                "automountServiceAccountToken": False,
            },
        },
        "traffic": DEFAULT_TRAFFIC,
    }


def test_image_pull_secrets_isvc_first_then_runtime() -> None:
    """controller_test.go:3645-3815: no mode annotation (ConfigMap default Knative); isvc secret before the SR's.

    That test creates the isvc without running the defaulter, so ``automountServiceAccountToken`` stays unset here
    by giving the ConfigMap a ``security`` key with the shipped value.
    """
    both = {"key1": "val1FromSR", "key2": "val2FromSR"}
    runtime = tf_runtime(both, both, [{"name": "sr-image-pull-secret"}])
    isvc = {
        "metadata": {
            "name": "svc-with-servingruntime",
            "namespace": "default",
            "labels": {"key2": "val2FromISVC"},
            "annotations": {"key2": "val2FromISVC"},
        },
        "spec": {
            "predictor": {
                "minReplicas": 1,
                "maxReplicas": 3,
                "model": {"modelFormat": {"name": "tensorflow"}, "storageUri": STORAGE_URI},
                "imagePullSecrets": [{"name": "isvc-image-pull-secret"}],
            }
        },
    }
    config = suite_config(security={"autoMountServiceAccountToken": True})
    name = "svc-with-servingruntime"
    assert render(isvc, runtime, config)["predictor"]["spec"] == {
        "template": {
            "metadata": {
                "labels": {
                    "serving.kserve.io/inferenceservice": name,
                    "component": "predictor",
                    "key1": "val1FromSR",
                    "key2": "val2FromISVC",
                },
                "annotations": {
                    SOURCE_URI: STORAGE_URI,
                    **KPA,
                    "autoscaling.knative.dev/max-scale": "3",
                    "autoscaling.knative.dev/min-scale": "1",
                    "key1": "val1FromSR",
                    "key2": "val2FromISVC",
                },
            },
            "spec": {
                "containers": [tf_container("1.14.0", name)],
                "imagePullSecrets": [{"name": "isvc-image-pull-secret"}, {"name": "sr-image-pull-secret"}],
            },
        },
        "traffic": DEFAULT_TRAFFIC,
    }


def _canary_isvc(canary: int | None) -> dict:
    """controller_test.go:3380-3400: a TF predictor; the canary step sets canaryTrafficPercent 20."""
    predictor: dict[str, Any] = {
        "minReplicas": 1,
        "maxReplicas": 3,
        "tensorflow": {**TF_114, "storageUri": STORAGE_URI + "/v2"},
    }
    if canary is not None:
        predictor["canaryTrafficPercent"] = canary
    return {
        "metadata": {"name": "foo-canary", "namespace": "default", "annotations": KNATIVE_MODE},
        "spec": {"predictor": predictor},
    }


def test_canary_split_against_rolled_out_revision() -> None:
    """controller_test.go:3474-3515: revision-v1 rolled out, canary 20 → latest 20 / revision-v1 80 (tag prev)."""
    ksvc = render(_canary_isvc(20), tf_runtime(), rolled_out_revision="revision-v1")["predictor"]
    assert ksvc["spec"]["traffic"] == [
        {"latestRevision": True, "percent": 20},
        {"tag": "prev", "revisionName": "revision-v1", "latestRevision": False, "percent": 80},
    ]
    assert ksvc["spec"]["template"]["metadata"]["annotations"][SOURCE_URI] == STORAGE_URI + "/v2"


def test_canary_promoted() -> None:
    """controller_test.go:3528-3543: canaryTrafficPercent removed → all traffic to the latest revision."""
    ksvc = render(_canary_isvc(None), tf_runtime(), rolled_out_revision="revision-v2")["predictor"]
    assert ksvc["spec"]["traffic"] == DEFAULT_TRAFFIC


def test_explainer_autoscaling_and_timeout() -> None:
    """controller_test.go:1530-1583 (defaultExplainerIsvc): ART explainer with minReplicas 1, maxReplicas 2,
    scaleTarget 80 and timeout 30 → KPA target/min/max and both timeouts on its ksvc."""
    isvc = {
        "metadata": {
            "name": "explained",
            "namespace": "default",
            "annotations": {"serving.kserve.io/deploymentMode": "Knative"},
        },
        "spec": {
            "predictor": {"tensorflow": TF_114},
            "explainer": {
                "minReplicas": 1,
                "maxReplicas": 2,
                "scaleTarget": 80,
                "timeout": 30,
                "art": {
                    "type": "SquareAttack",
                    "config": {"nb_classes": "10"},
                    "name": "kserve-container",
                    "resources": RESOURCES,
                    "runtimeVersion": "latest",
                },
            },
        },
    }
    ksvcs = render(isvc, tf_runtime())
    explainer = ksvcs["explainer"]
    assert explainer["metadata"]["name"] == "explained-explainer"
    template = explainer["spec"]["template"]
    assert template["metadata"]["labels"] == {
        "serving.kserve.io/inferenceservice": "explained",
        "component": "explainer",
    }
    assert template["metadata"]["annotations"] == {
        "serving.kserve.io/deploymentMode": "Knative",
        **KPA,
        "autoscaling.knative.dev/target": "80",
        "autoscaling.knative.dev/min-scale": "1",
        "autoscaling.knative.dev/max-scale": "2",
    }
    assert template["spec"]["timeoutSeconds"] == 30 and template["spec"]["responseStartTimeoutSeconds"] == 30
    assert template["spec"]["containers"][0]["image"] == "kserve/art-explainer:latest"
    assert "containerConcurrency" not in template["spec"]
    # the predictor of the same isvc keeps Knative's defaults
    assert "timeoutSeconds" not in ksvcs["predictor"]["spec"]["template"]["spec"]
    assert ksvcs["predictor"]["spec"]["template"]["metadata"]["annotations"]["autoscaling.knative.dev/min-scale"] == "1"


def test_container_concurrency_and_cluster_local_isvc() -> None:
    """containerConcurrency reaches the revision spec; the isvc's cluster-local label stays on the ksvc metadata
    (Knative keeps the route cluster-local) and leaves the template (serviceLabelDisallowedList)."""
    isvc = {
        "metadata": {
            "name": "local",
            "namespace": "default",
            "labels": {"networking.knative.dev/visibility": "cluster-local"},
            "annotations": {
                "serving.kserve.io/deploymentMode": "Knative",
                "serving.kserve.io/enable-tag-routing": "true",
            },
        },
        "spec": {
            "predictor": {
                "containerConcurrency": 4,
                "scaleMetric": "concurrency",
                "model": {"modelFormat": {"name": "tensorflow"}, "storageUri": STORAGE_URI},
            }
        },
    }
    ksvc = render(isvc, tf_runtime())["predictor"]
    assert ksvc["metadata"]["labels"]["networking.knative.dev/visibility"] == "cluster-local"
    assert "networking.knative.dev/visibility" not in ksvc["spec"]["template"]["metadata"]["labels"]
    assert ksvc["spec"]["template"]["spec"]["containerConcurrency"] == 4
    assert ksvc["spec"]["template"]["metadata"]["annotations"]["autoscaling.knative.dev/metric"] == "concurrency"
    assert ksvc["spec"]["traffic"] == [{"latestRevision": True, "percent": 100, "tag": "latest"}]
