"""Storage credentials, ported from KServe's TestCredentialInjection (pod/storage_initializer_injector_test.go:721-1160)
and pkg/credentials/*_test.go. The Go test's credentials config names the S3 keys awsAccessKeyID/awsSecretAccessKey."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml

from kserve_compile.errors import InputError
from kserve_compile.inputs.cluster_state import ClusterState
from kserve_compile.inputs.config import parse_config
from kserve_compile.render.pod_webhook.inject import inject_pod

DATA = Path(__file__).resolve().parents[2] / "kserve_compile" / "data"
SHIPPED = yaml.safe_load((DATA / "inferenceservice-config.yaml").read_text())["data"]
GO_CREDENTIALS = {
    "gcs": {"gcsCredentialFileName": "gcloud-application-credentials.json"},
    "s3": {"s3AccessKeyIDName": "awsAccessKeyID", "s3SecretAccessKeyName": "awsSecretAccessKey"},
}
SRC = "internal.serving.kserve.io/storage-initializer-sourceuri"
HF = [
    {"name": "HF_HUB_ENABLE_HF_TRANSFER", "value": "1"},
    {"name": "HF_XET_HIGH_PERFORMANCE", "value": "1"},
    {"name": "HF_XET_NUM_CONCURRENT_RANGE_GETS", "value": "8"},
]


def config(credentials=GO_CREDENTIALS):
    return parse_config({**SHIPPED, "credentials": json.dumps(credentials)})


def ref(name, secret, key):
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def sa(*secrets, name="default", annotations=None):
    meta = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, "secrets": [{"name": s} for s in secrets]}


def secret(name, data, annotations=None, string=False):
    meta = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    if string:
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "stringData": data}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": meta,
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def inject(objects, annotations=None, cfg=None, spec_extra=None):
    template = {
        "metadata": {
            "labels": {"serving.kserve.io/inferenceservice": "m"},
            "annotations": annotations or {SRC: "gs://foo"},
        },
        "spec": {"containers": [{"name": "kserve-container"}], **(spec_extra or {})},
    }
    out, warnings = inject_pod(
        template, namespace="default", config=cfg or config(), cluster=ClusterState.from_manifests(objects)
    )
    return out["spec"], warnings


def test_s3_secret():
    # "Test s3 secrets injection" (:729-830)
    spec, warnings = inject(
        [
            sa("s3-secret"),
            secret(
                "s3-secret",
                {"awsAccessKeyID": "", "awsSecretAccessKey": ""},
                {"serving.kserve.io/s3-endpoint": "s3.aws.com"},
            ),
        ]
    )
    assert spec["initContainers"][0]["env"] == [
        ref("AWS_ACCESS_KEY_ID", "s3-secret", "awsAccessKeyID"),
        ref("AWS_SECRET_ACCESS_KEY", "s3-secret", "awsSecretAccessKey"),
        {"name": "S3_ENDPOINT", "value": "s3.aws.com"},
        {"name": "AWS_ENDPOINT_URL", "value": "https://s3.aws.com"},
        *HF,
    ]
    assert warnings == []


def test_gcs_secret():
    # "Test GCS secrets injection" (:831-930)
    spec, _ = inject([sa("user-gcp-sa"), secret("user-gcp-sa", {"gcloud-application-credentials.json": "{}"})])
    init = spec["initContainers"][0]
    assert init["volumeMounts"] == [
        {"name": "kserve-provision-location", "mountPath": "/mnt/models"},
        {"name": "user-gcp-sa", "mountPath": "/var/secrets/", "readOnly": True},
    ]
    assert init["env"] == [
        {"name": "GOOGLE_APPLICATION_CREDENTIALS", "value": "/var/secrets/gcloud-application-credentials.json"},
        *HF,
    ]
    assert spec["volumes"] == [
        {"name": "kserve-provision-location", "emptyDir": {}},
        {"name": "user-gcp-sa", "secret": {"secretName": "user-gcp-sa"}},
    ]


def test_storage_spec_with_key():
    # "Use storage spec secret with key" (:931-1030): placeholder URI rewritten from the secret's type and bucket.
    objects = [
        sa(),
        secret("storage-config", {"my-storage": json.dumps({"type": "s3", "bucket": "my-bucket"})}, string=True),
    ]
    annotations = {
        SRC: "<scheme-placeholder>://foo/bar",
        "internal.serving.kserve.io/storage-spec": "true",
        "internal.serving.kserve.io/storage-spec-param": '{"some-param": "some-val"}',
        "internal.serving.kserve.io/storage-spec-key": "my-storage",
    }
    spec, warnings = inject(objects, annotations)
    init = spec["initContainers"][0]
    assert init["args"] == ["s3://my-bucket/foo/bar", "/mnt/models"]
    assert init["env"] == [
        ref("STORAGE_CONFIG", "storage-config", "my-storage"),
        {"name": "STORAGE_OVERRIDE_CONFIG", "value": '{"some-param":"some-val"}'},
        *HF,
    ]
    assert warnings == []


def test_storage_spec_default_key():
    # "Use default storage spec secret" (:1031-1125): no key → entry "default".
    objects = [
        secret(
            "storage-config",
            {"default": json.dumps({"type": "s3", "bucket": "my-bucket", "region": "na"})},
            string=True,
        )
    ]
    annotations = {
        SRC: "<scheme-placeholder>://foo/bar",
        "internal.serving.kserve.io/storage-spec": "true",
        "internal.serving.kserve.io/storage-spec-param": '{"some-param": "some-val"}',
    }
    spec, _ = inject(objects, annotations)
    assert spec["initContainers"][0]["args"] == ["s3://my-bucket/foo/bar", "/mnt/models"]
    assert spec["initContainers"][0]["env"][0] == ref("STORAGE_CONFIG", "storage-config", "default")


@pytest.mark.parametrize(
    ("data", "params", "message"),
    [
        (
            {"default": json.dumps({"type": "gs"})},
            None,
            r"storage type must be one of \[s3, hdfs, webhdfs\]. storage type \[gs\] is not supported",
        ),
        ({"default": json.dumps({"bucket": "b"})}, None, "unable to determine storage type"),
        (
            {"default": json.dumps({"type": "s3"})},
            None,
            r"format \[s3\] requires a bucket but one wasn't found in storage data or parameters",
        ),
        ({"other": "{}"}, "k", "specified storage key k not found in storage secret storage-config"),
        ({"default": "not json"}, None, "invalid json encountered in key default of storage secret storage-config"),
    ],
)
def test_storage_spec_errors(data, params, message):
    # pkg/credentials/service_account_credentials_test.go storage spec error cases
    annotations = {SRC: "<scheme-placeholder>://foo", "internal.serving.kserve.io/storage-spec": "true"}
    if params:
        annotations["internal.serving.kserve.io/storage-spec-key"] = params
    with pytest.raises(InputError, match=message):
        inject([secret("storage-config", data, string=True)], annotations)


def test_s3_secret_with_shipped_config_and_settings():
    # s3_secret_test.go / utils_test.go: endpoint scheme decides S3_USE_HTTPS; other settings from annotations or data.
    objects = [
        sa("s3"),
        secret(
            "s3",
            {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b", "AWS_DEFAULT_REGION": "eu-west-1"},
            {
                "serving.kserve.io/s3-endpoint": "http://minio:9000",
                "serving.kserve.io/s3-verifyssl": "0",
                "serving.kserve.io/s3-usevirtualbucket": "false",
            },
        ),
    ]
    spec, _ = inject(objects, cfg=parse_config(SHIPPED))
    assert spec["initContainers"][0]["env"][:8] == [
        ref("AWS_ACCESS_KEY_ID", "s3", "AWS_ACCESS_KEY_ID"),
        ref("AWS_SECRET_ACCESS_KEY", "s3", "AWS_SECRET_ACCESS_KEY"),
        {"name": "S3_USE_HTTPS", "value": "0"},
        {"name": "S3_ENDPOINT", "value": "minio:9000"},
        {"name": "AWS_ENDPOINT_URL", "value": "http://minio:9000"},
        {"name": "S3_VERIFY_SSL", "value": "0"},
        {"name": "AWS_DEFAULT_REGION", "value": "eu-west-1"},
        {"name": "S3_USER_VIRTUAL_BUCKET", "value": "false"},
    ]


def test_irsa_service_account_then_secret_overrides():
    # s3_service_account_test.go + service_account_credentials_test.go: IRSA envs, then a Secret merged over them.
    objects = [
        sa(
            "s3",
            annotations={
                "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/r",
                "serving.kserve.io/s3-endpoint": "s3.amazonaws.com",
                "serving.kserve.io/s3-region": "us-east-2",
            },
        ),
        secret("s3", {"awsAccessKeyID": "", "awsSecretAccessKey": ""}, {"serving.kserve.io/s3-region": "eu-west-1"}),
    ]
    spec, _ = inject(objects)
    assert spec["initContainers"][0]["env"] == [
        {"name": "S3_ENDPOINT", "value": "s3.amazonaws.com"},
        {"name": "AWS_ENDPOINT_URL", "value": "https://s3.amazonaws.com"},
        {"name": "AWS_DEFAULT_REGION", "value": "eu-west-1"},
        ref("AWS_ACCESS_KEY_ID", "s3", "awsAccessKeyID"),
        ref("AWS_SECRET_ACCESS_KEY", "s3", "awsSecretAccessKey"),
        *HF,
    ]


def test_azure_secret():
    # azure_secret_test.go "AzureSecretEnvs": tenant id always referenced, absent optional keys skipped.
    spec, _ = inject(
        [
            sa("az"),
            secret(
                "az",
                {
                    "AZURE_CLIENT_ID": "x",
                    "AZURE_CLIENT_SECRET": "y",
                    "AZURE_SUBSCRIPTION_ID": "z",
                    "AZURE_TENANT_ID": "t",
                },
            ),
        ]
    )
    assert spec["initContainers"][0]["env"] == [
        ref("AZURE_SUBSCRIPTION_ID", "az", "AZURE_SUBSCRIPTION_ID"),
        ref("AZURE_TENANT_ID", "az", "AZURE_TENANT_ID"),
        ref("AZURE_CLIENT_ID", "az", "AZURE_CLIENT_ID"),
        ref("AZURE_CLIENT_SECRET", "az", "AZURE_CLIENT_SECRET"),
        *HF,
    ]


def test_azure_legacy_and_access_key():
    # azure_secret_test.go legacy names; "AzureStorageAccessKey"
    spec, _ = inject(
        [
            sa("az"),
            secret(
                "az", {"AZ_CLIENT_ID": "x", "AZ_CLIENT_SECRET": "y", "AZ_SUBSCRIPTION_ID": "z", "AZ_TENANT_ID": "t"}
            ),
        ]
    )
    assert spec["initContainers"][0]["env"][:4] == [
        ref("AZURE_SUBSCRIPTION_ID", "az", "AZ_SUBSCRIPTION_ID"),
        ref("AZURE_TENANT_ID", "az", "AZ_TENANT_ID"),
        ref("AZURE_CLIENT_ID", "az", "AZ_CLIENT_ID"),
        ref("AZURE_CLIENT_SECRET", "az", "AZ_CLIENT_SECRET"),
    ]
    spec, _ = inject([sa("az"), secret("az", {"AZURE_STORAGE_ACCESS_KEY": "k"})])
    assert spec["initContainers"][0]["env"][0] == ref("AZURE_STORAGE_ACCESS_KEY", "az", "AZURE_STORAGE_ACCESS_KEY")


def test_https_hdfs_hf_secrets():
    # https_secret_test.go, hdfs_secret_test.go, hf_secret_test.go
    spec, _ = inject([sa("h"), secret("h", {"https-host": "zoo.com", "headers": '{"a": "b"}'})])
    assert spec["initContainers"][0]["env"][0] == {"name": "zoo.com-headers", "value": '{"a": "b"}'}
    spec, _ = inject([sa("h"), secret("h", {"HDFS_NAMENODE": "nn"})])
    assert spec["initContainers"][0]["volumeMounts"][-1] == {
        "name": "hdfs-secrets",
        "mountPath": "/var/secrets/kserve-hdfscreds",
        "readOnly": True,
    }
    assert spec["volumes"][-1] == {"name": "hdfs-secrets", "secret": {"secretName": "h"}}
    spec, _ = inject([sa("h"), secret("h", {"HF_TOKEN": "t"})])
    assert spec["initContainers"][0]["env"][0] == ref("HF_TOKEN", "h", "HF_TOKEN")


def test_storage_secret_name_annotation_wins_over_service_account():
    # service_account_credentials_test.go "storageSecretName annotation"
    objects = [sa("ignored"), secret("chosen", {"HF_TOKEN": "t"}), secret("ignored", {"HF_TOKEN": "u"})]
    spec, _ = inject(
        objects, {SRC: "hf://o/m", "serving.kserve.io/storageSecretName": "chosen"}, cfg=parse_config(SHIPPED)
    )
    assert spec["initContainers"][0]["env"][0] == ref("HF_TOKEN", "chosen", "HF_TOKEN")


def test_missing_objects_are_warnings():
    spec, warnings = inject([sa("gone")], spec_extra={"serviceAccountName": "default"})
    assert warnings == [
        "Secret default/gone not in the inputs: its storage credentials are not injected into storage-initializer"
    ]
    spec, warnings = inject([], spec_extra={"serviceAccountName": "sa1"})
    assert warnings == [
        "ServiceAccount default/sa1 not in the inputs: no storage credentials injected into storage-initializer"
    ]


def test_aws_ca_bundle_configmap_triggers_ca_mount():
    # TestCaBundleConfigMapVolumeMountInStorageInitializer "s3 cabundle annotation" (:1700-1850)
    objects = [
        sa("s3"),
        secret(
            "s3",
            {"awsAccessKeyID": "", "awsSecretAccessKey": ""},
            {"serving.kserve.io/s3-cabundle-configmap": "my-ca", "serving.kserve.io/s3-cabundle": "/path/to/ca.crt"},
        ),
    ]
    spec, _ = inject(objects)
    init = spec["initContainers"][0]
    assert {"name": "CA_BUNDLE_CONFIGMAP_NAME", "value": "my-ca"} in init["env"]
    assert {"name": "CA_BUNDLE_VOLUME_MOUNT_POINT", "value": "/path/to"} in init["env"]
    assert init["volumeMounts"][-1] == {"name": "cabundle-cert", "mountPath": "/path/to", "readOnly": True}
    assert spec["volumes"][-1] == {"name": "cabundle-cert", "configMap": {"name": "my-ca"}}
