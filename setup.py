"""The package layout, which pyproject.toml cannot state: the training scripts of the top-level
``training/`` folder ship inside the package as ``greed_env.training``, so an installed
greed_env runs the same scripts (``greed train NAME``) as a checkout. Everything else is in
pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["greed_env", "greed_env.*"]), "greed_env.training"],
    package_dir={"greed_env.training": "training"},
)
