"""KServe's local model caches: LocalModelCache, LocalModelNamespaceCache, LocalModelNodeGroup, LocalModelNode.

Inputs: the caches, their node groups, ``v1/Node`` objects (the node inventory the controller selects from), and
optionally live ``LocalModelNode`` objects. Rendered: the webhook's labels/annotations on each InferenceService a
cache covers (``rewrite.rewrite_isvc``; the pod webhook then mounts ``pvc://<cache>-<group>/models/<key>`` instead of
adding a download init container), and each cache's own objects (``render.render``): download and serving
PersistentVolumes and PersistentVolumeClaims, ``LocalModelNode`` per selected node, and the node agent's download
Jobs. For an LLMInferenceService, its own webhook's labels (``rewrite.rewrite_llm_metadata``, rules in ``llmisvc``);
the LLM renderer then reads the model from ``matching.cached_model_uri``, and the services count as the caches'
consumers like isvcs. Modules load only when a run needs them: ``rewrite`` for every service, the rest when the
inputs hold local-model kinds (or a service carries local-model keys to remove).
Sources: see each module (``pkg/apis/serving/v1alpha1/local_model_*``, ``pkg/controller/v1alpha1/localmodel*``,
``pkg/webhook/admission/localmodel*``).
"""
