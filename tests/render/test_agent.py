"""The agent sidecar (logger / batcher / puller), ported from KServe's pod/agent_injector_test.go and
batcher_injector_test.go (the standalone batcher container is not used by the mutator; the batcher runs in the agent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kserve_compile.errors import InputError
from kserve_compile.inputs.cluster_state import ClusterState
from kserve_compile.inputs.config import parse_config
from kserve_compile.render.pod_webhook.agent import probe_json
from kserve_compile.render.pod_webhook.inject import inject_pod

DATA = Path(__file__).resolve().parents[2] / "kserve_compile" / "data"
SHIPPED = yaml.safe_load((DATA / "inferenceservice-config.yaml").read_text())["data"]
AGENT = {
    "image": "gcr.io/kserve/agent:latest",
    "cpuRequest": "100m",
    "cpuLimit": "1",
    "memoryRequest": "200Mi",
    "memoryLimit": "1Gi",
}
LOGGER = {**AGENT, "defaultUrl": "http://httpbin.org/"}
RES = {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "100m", "memory": "200Mi"}}
TCP_PROBE = {
    "tcpSocket": {"port": 8080},
    "initialDelaySeconds": 0,
    "timeoutSeconds": 1,
    "periodSeconds": 10,
    "successThreshold": 1,
    "failureThreshold": 3,
}
TCP_PROBE_JSON = (
    '{"tcpSocket":{"port":8080},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3}'
)
LABELS = {"serving.kserve.io/inferenceservice": "sklearn", "endpoint": "default", "component": "predictor"}


def config(**keys):
    data = {**SHIPPED, "agent": json.dumps(AGENT), "logger": json.dumps(LOGGER)}
    data.update({k: json.dumps(v) for k, v in keys.items()})
    return parse_config(data)


def inject(annotations, containers, *, name="deployment", cfg=None, objects=(), logger=None, extra_spec=None):
    template = {
        "metadata": {"name": name, "labels": dict(LABELS), "annotations": annotations},
        "spec": {"containers": containers, **(extra_spec or {})},
    }
    out, warnings = inject_pod(
        template,
        namespace="default",
        config=cfg or config(),
        cluster=ClusterState.from_manifests(objects),
        logger=logger,
    )
    return out["spec"], warnings


def agent(args, *, env=None, path="/", **extra):
    container = {
        "name": "agent",
        "image": "gcr.io/kserve/agent:latest",
        "args": args,
        "resources": RES,
        "ports": [{"name": "agent-port", "containerPort": 9081, "protocol": "TCP"}],
        "readinessProbe": {
            "httpGet": {
                "httpHeaders": [{"name": "K-Network-Probe", "value": "queue"}],
                "port": 9081,
                "path": path,
                "scheme": "HTTP",
            }
        },
    }
    if env is not None:
        container["env"] = env
    container.update(extra)
    return container


LOGGER_ARGS = [
    "--log-url",
    "http://httpbin.org/",
    "--source-uri",
    "deployment",
    "--log-mode",
    "all",
    "--inference-service",
    "sklearn",
    "--namespace",
    "default",
    "--endpoint",
    "default",
    "--component",
    "predictor",
]


def test_add_logger():
    # TestAgentInjector "AddLogger" (:264-390)
    annotations = {
        "internal.serving.kserve.io/logger": "true",
        "internal.serving.kserve.io/logger-sink-url": "http://httpbin.org/",
        "internal.serving.kserve.io/logger-mode": "all",
    }
    spec, _ = inject(annotations, [{"name": "sklearn", "readinessProbe": TCP_PROBE}])
    assert spec["containers"] == [
        {"name": "sklearn", "readinessProbe": TCP_PROBE},
        agent(
            [*LOGGER_ARGS, "--logger-tls-skip-verify", "false", "--component-port", "8080"],
            env=[{"name": "SERVING_READINESS_PROBE", "value": TCP_PROBE_JSON}],
        ),
    ]


def test_logger_defaults_and_metadata():
    # "DefaultLoggerConfig" (:1005-1129) and "AddLoggerWithMetadata" (:391-520)
    annotations = {
        "internal.serving.kserve.io/logger": "true",
        "internal.serving.kserve.io/logger-metadata-headers": "Foo,Bar",
        "internal.serving.kserve.io/logger-metadata-annotations": "a.io/x,missing",
        "a.io/x": "1",
    }
    spec, _ = inject(annotations, [{"name": "sklearn"}], name="")
    assert spec["containers"][1]["args"] == [
        "--log-url", "http://httpbin.org/", "--source-uri", "", "--log-mode", "all", "--inference-service", "sklearn",
        "--namespace", "default", "--endpoint", "default", "--component", "predictor",
        "--metadata-headers", "Foo,Bar", "--metadata-annotations", "a.io/x=1",
        "--logger-tls-skip-verify", "false", "--component-port", "8080",
    ]  # fmt: skip
    assert "env" not in spec["containers"][1]


def test_add_batcher():
    # "AddBatcher" (:675-790)
    annotations = {
        "internal.serving.kserve.io/batcher": "true",
        "internal.serving.kserve.io/batcher-max-batchsize": "32",
        "internal.serving.kserve.io/batcher-max-latency": "100",
    }
    spec, _ = inject(annotations, [{"name": "sklearn", "readinessProbe": TCP_PROBE}])
    assert spec["containers"][1] == agent(
        ["--enable-batcher", "--max-batchsize", "32", "--max-latency", "100", "--component-port", "8080"],
        env=[{"name": "SERVING_READINESS_PROBE", "value": TCP_PROBE_JSON}],
    )


def test_no_annotations_no_agent():
    # "DoNotAddAgent"/"DoNotAddLogger"/"DoNotAddBatcher" (:242-263, :653-674, :791-812)
    containers = [{"name": "sklearn"}]
    spec, _ = inject({}, containers)
    assert spec["containers"] == containers


def test_agent_already_injected():
    # "AgentAlreadyInjected" (:813-1004)
    containers = [{"name": "sklearn"}, {"name": "agent", "image": "mine"}]
    spec, _ = inject({"internal.serving.kserve.io/logger": "true"}, containers)
    assert spec["containers"] == containers


def test_puller_mounts_model_dir_and_config():
    # "AddAgent" (:108-241)
    annotations = {
        "internal.serving.kserve.io/agent": "true",
        "internal.serving.kserve.io/configVolumeName": "modelconfig-deployment-0",
        "internal.serving.kserve.io/configMountPath": "/mnt/configs",
        "internal.serving.kserve.io/modelDir": "/mnt/models",
    }
    spec, _ = inject(annotations, [{"name": "kserve-container", "readinessProbe": TCP_PROBE}])
    assert spec == {
        "containers": [
            {
                "name": "kserve-container",
                "readinessProbe": TCP_PROBE,
                "volumeMounts": [{"name": "model-dir", "mountPath": "/mnt/models"}],
            },
            agent(
                [
                    "--enable-puller",
                    "--config-dir",
                    "/mnt/configs",
                    "--model-dir",
                    "/mnt/models",
                    "--component-port",
                    "8080",
                ],
                env=[{"name": "SERVING_READINESS_PROBE", "value": TCP_PROBE_JSON}],
                volumeMounts=[
                    {"name": "model-dir", "mountPath": "/mnt/models"},
                    {"name": "model-config", "mountPath": "/mnt/configs"},
                ],
            ),
        ],
        "volumes": [
            {"name": "model-dir", "emptyDir": {}},
            {"name": "model-config", "configMap": {"name": "modelconfig-deployment-0"}},
        ],
    }


def test_queue_proxy_env_copied_and_user_port_changed():
    # "QueueProxyUserPortProvided" (:1130-1263)
    queue = {"name": "queue-proxy", "env": [{"name": "USER_PORT", "value": "8080"}, {"name": "X", "value": "y"}]}
    spec, _ = inject({"internal.serving.kserve.io/logger": "true"}, [{"name": "sklearn"}, queue])
    assert spec["containers"][1]["env"] == [{"name": "USER_PORT", "value": "9081"}, {"name": "X", "value": "y"}]
    assert spec["containers"][2]["env"] == [{"name": "USER_PORT", "value": "8080"}, {"name": "X", "value": "y"}]


def test_component_port_from_kserve_and_transformer_containers():
    # "KserveContainer has port" (:1264-1417); transformer wins when present.
    spec, _ = inject(
        {"internal.serving.kserve.io/batcher": "true"},
        [{"name": "kserve-container", "ports": [{"containerPort": 9000}]}],
    )
    assert spec["containers"][1]["args"][-2:] == ["--component-port", "9000"]
    containers = [{"name": "kserve-container", "ports": [{"containerPort": 9000}]}, {"name": "transformer-container"}]
    spec, _ = inject({"internal.serving.kserve.io/batcher": "true"}, containers)
    assert spec["containers"][2]["args"][-2:] == ["--component-port", "8080"]


def test_http_readiness_probe_path_mirrored():
    # "AddAgentWithHTTPGetReadinessProbe" (:1703-1893) and TestReadinessProbeInheritance (:2243-)
    probe = {"httpGet": {"path": "/v2/health/ready", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 5}
    spec, _ = inject(
        {"internal.serving.kserve.io/logger": "true"},
        [{"name": "sklearn", "readinessProbe": probe, "securityContext": {"runAsUser": 7}}],
    )
    added = spec["containers"][1]
    assert added["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert added["env"] == [
        {
            "name": "SERVING_READINESS_PROBE",
            "value": '{"httpGet":{"path":"/v2/health/ready","port":8080,"scheme":"HTTP"},"periodSeconds":5}',
        }
    ]
    assert added["securityContext"] == {"runAsUser": 7}


def test_logger_storage_from_isvc_and_ca_bundle():
    # "AddLoggerWithStorage" (:1572-1702): store path/format, logger SA credentials; logger caBundle volume.
    cfg = config(logger={**LOGGER, "caBundle": "logger-ca", "caCertFile": "ca.crt"})
    logger = {"mode": "all", "storage": {"path": "/logs", "parameters": {"format": "json"}}, "batchSize": 5}
    objects = [
        {"kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "default"}},
        {
            "kind": "ServiceAccount",
            "metadata": {"name": "logger-sa", "namespace": "default"},
            "secrets": [{"name": "s3"}],
        },
        {
            "kind": "Secret",
            "metadata": {"name": "s3", "namespace": "default"},
            "stringData": {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"},
        },
    ]
    spec, warnings = inject(
        {"internal.serving.kserve.io/logger": "true"}, [{"name": "sklearn"}], cfg=cfg, objects=objects, logger=logger
    )
    added = spec["containers"][1]
    assert added["args"] == [
        *LOGGER_ARGS, "--log-store-path", "/logs", "--log-store-format", "json", "--log-batch-size", "5",
        "--logger-ca-cert-file", "ca.crt", "--logger-tls-skip-verify", "false", "--component-port", "8080",
    ]  # fmt: skip
    assert added["volumeMounts"] == [{"name": "agent-ca-bundle", "mountPath": "/etc/tls/logger", "readOnly": True}]
    assert spec["volumes"] == [{"name": "agent-ca-bundle", "configMap": {"name": "logger-ca", "optional": True}}]
    assert added["env"][:2] == [
        {"name": "AWS_ACCESS_KEY_ID", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "AWS_ACCESS_KEY_ID"}}},
        {
            "name": "AWS_SECRET_ACCESS_KEY",
            "valueFrom": {"secretKeyRef": {"name": "s3", "key": "AWS_SECRET_ACCESS_KEY"}},
        },
    ]
    assert warnings == []


def test_bad_agent_resources_error():
    # TestGetAgentConfigs (:2173-2242)
    with pytest.raises(InputError, match='failed to parse resource configuration for "agent"'):
        inject({}, [{"name": "sklearn"}], cfg=config(agent={**AGENT, "cpuLimit": "one"}))


def test_probe_json_escapes_like_go():
    assert probe_json(
        {"httpGet": {"path": "/a&b", "port": "http", "httpHeaders": [{"name": "X", "value": "<y>"}]}}
    ) == ('{"httpGet":{"path":"/a\\u0026b","port":"http","httpHeaders":[{"name":"X","value":"\\u003cy\\u003e"}]}}')
