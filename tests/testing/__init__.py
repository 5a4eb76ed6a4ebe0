"""The suite's shared helpers, one importable package (`from testing.corpus import CORPUS`): the reference
corpus and its patches, real git repositories of the seed change, the CLI runners, the local GitHub server,
the workflow executor and its runner's Python, and the stand-in clients and servers of the result tests.
pytest puts tests/ on sys.path (pyproject.toml, [tool.pytest.ini_options] pythonpath)."""
