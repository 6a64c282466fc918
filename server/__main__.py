"""``python -m server --model_name NAME --model_dir DIR [--http_port 8080 --grpc_port 8081 ...]``."""

import sys

from server.main import main

sys.exit(main())
