"""``python -m router``: see :mod:`router.main`.

The router's packages (httptools, uvloop) are the ``router`` extra; without them this says which command
installs them, in one line, instead of a traceback.
"""

import sys

_ROUTER_PACKAGES = frozenset({"httptools", "uvloop"})


def _run() -> int:
    try:
        from router.main import main
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _ROUTER_PACKAGES:
            raise
        sys.stderr.write(
            f"error: the router needs the Python package {exc.name!r}: pip install 'kserve-compile[router]'\n"
        )
        return 2
    return main()


sys.exit(_run())
