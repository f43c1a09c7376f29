"""The lab's command groups, `bench` and `eval`, found by the `paperatlas` command through the
`paperatlas.commands` entry points (lab/pyproject.toml)."""
