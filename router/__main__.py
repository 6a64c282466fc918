"""``python -m router``: see :mod:`router.main`."""

from router.main import main

raise SystemExit(main())
