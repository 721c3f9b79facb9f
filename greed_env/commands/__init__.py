"""Sub-commands of the ``greed`` CLI (one module per group, registered in greed_env.cli)."""
