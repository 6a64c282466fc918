"""Run kserve-compile from a checkout: ``python cli.py render isvc.yaml``. The commands live in kserve_compile/cli/."""

from kserve_compile.cli import main

if __name__ == "__main__":
    main()
