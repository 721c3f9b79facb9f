"""The web page of ``greed web`` (``app/``) and the JavaScript host (``host/``), shipped inside
the package as ``greed_env.web`` so that :func:`importlib.resources.files` finds them in a wheel
and in an editable install alike. No Python code lives here."""
