#!/bin/sh
# The one render command of this repository: CI runs it with --check (exit 1 lists the stale files), and a
# developer runs it without --check to update rendered/ before committing.
set -eu
cd "$(dirname "$0")/.."
exec kserve-compile render models --config config/inferenceservice-config.yaml -n ml-prod --output-dir rendered "$@"
