"""The two optional C extensions; everything else about the package is in pyproject.toml.

Each is a small walk with a pure-Python twin that gives the same result (the tests compare them): the YAML emitter's
structural walk and the deep copy of JSON-shaped data. Without them rendering 1,000 LLMInferenceServices takes
~1.5× as long (bench/render_bench.py prints the emitter's C / Python ratio). ``optional=True``: without a C
compiler the install goes on and the Python twins run. (setup.py rather than pyproject's ``ext-modules`` table,
which setuptools still calls experimental.)
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("kserve_compile.emit._yaml_c", ["kserve_compile/emit/_yaml_c.c"], optional=True),
        Extension("kserve_compile._datacopy_c", ["kserve_compile/_datacopy_c.c"], optional=True),
    ]
)
