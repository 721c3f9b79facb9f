"""The package layout, which pyproject.toml cannot state: the training scripts of the top-level
``training/`` folder ship inside the package as ``greed_env.training``, so an installed
greed_env runs the same scripts (``greed train NAME``) as a checkout; the top-level ``web/``
folder (the JavaScript host and the page of ``greed web``) ships as ``greed_env.web``, found at
run time with importlib.resources (its files are package data in pyproject.toml); and the shipped bots of the top-level
``agents/`` folder install as ``greed_env.agents`` (the files the bot registry reads, listed as
package data in pyproject.toml), so the repository holds each bot once. Everything else is in
pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["greed_env", "greed_env.*"]), "greed_env.training", "greed_env.web", "greed_env.agents"],
    package_dir={"greed_env.training": "training", "greed_env.web": "web", "greed_env.agents": "agents"},
)
