#!/bin/sh
# Helm post-renderer: a chart that templates InferenceServices is deployed as what they render.
#   helm install models ./chart --post-renderer ./post-renderer.sh
# Helm writes the rendered chart to stdin and applies what this prints; other objects pass through unchanged.
exec kserve-compile fn -q "$@"
