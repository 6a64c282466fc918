"""KServe's validating admission webhooks: ``isvc`` (InferenceService, ``pkg/apis/serving/v1beta1/
inference_service_validation.go``) and ``runtimes`` (ServingRuntime/ClusterServingRuntime,
``pkg/webhook/admission/servingruntime/``). The ``validate`` command's offline checks are in ``offline_check``."""
