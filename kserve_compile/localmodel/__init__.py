"""KServe's local model caches: LocalModelCache, LocalModelNamespaceCache, LocalModelNodeGroup, LocalModelNode.

Inputs: the caches, their node groups, ``v1/Node`` objects (the node inventory the controller selects from), and
optionally live ``LocalModelNode`` objects. Rendered: the webhook's labels/annotations on each InferenceService a
cache covers (``rewrite.rewrite_isvc``; the pod webhook then mounts ``pvc://<cache>-<group>/models/<key>`` instead of
adding a download init container), and each cache's own objects (``render.render``): download and serving
PersistentVolumes and PersistentVolumeClaims, ``LocalModelNode`` per selected node, and the node agent's download
Jobs. For LLMInferenceService: ``matching.find_cache``, ``matching.local_model_metadata`` and
``matching.cached_model_uri``. Modules load only when a run needs them: ``rewrite`` for every isvc, the rest when
the inputs hold local-model kinds.
Sources: see each module (``pkg/apis/serving/v1alpha1/local_model_*``, ``pkg/controller/v1alpha1/localmodel*``,
``pkg/webhook/admission/localmodel*``).
"""
