"""Parsed YAML kept by content: a hit gives the strict loader's data and positions, a problem is never kept."""

from __future__ import annotations

import os
from pathlib import Path

from infx import yamlcache
from infx.yamlio import load_yaml


def test_a_hit_gives_the_same_data_and_positions(tmp_path: Path, monkeypatch, corpus):
    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("INFX_NO_CACHE", raising=False)
    path = corpus / "configs" / "nvidia-master.yaml"
    fresh, _ = load_yaml(path)
    first, problems = yamlcache.load_yaml_cached(path)
    assert not problems and not isinstance(first, yamlcache.LazyDocument)  # parsed, then kept
    hit, problems = yamlcache.load_yaml_cached(path)
    assert not problems and isinstance(hit, yamlcache.LazyDocument) and hit.data == fresh.data
    key = next(iter(fresh.data))
    inner = (key, "scenarios", "fixed-seq-len", 0, "search-space", 0)
    assert hit.where(inner) == fresh.where(inner) and hit.where((key,)) == fresh.where((key,))


def test_changed_bytes_miss_and_problems_are_not_kept(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("INFX_NO_CACHE", raising=False)
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\n")
    yamlcache.load_yaml_cached(path)
    path.write_text("a: 2\n")
    doc, _ = yamlcache.load_yaml_cached(path)
    assert doc.data == {"a": 2}
    path.write_text("a: 1\na: 3\n")
    for _ in range(2):  # the duplicate key is reported every time, from the strict loader
        doc, problems = yamlcache.load_yaml_cached(path)
        assert doc is None and [p.rule for p in problems] == ["yaml-duplicate-key"]
    assert yamlcache.load_yaml_cached(tmp_path / "missing.yaml")[1][0].rule == "file-missing"


def test_a_fifo_is_refused_as_the_strict_loader_refuses_it(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("INFX_NO_CACHE", raising=False)
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)  # reading it would wait for a writer forever
    doc, problems = yamlcache.load_yaml_cached(fifo)
    assert doc is None and problems == load_yaml(fifo)[1]
    assert [p.rule for p in problems] == ["file-unreadable"] and "FIFO" in problems[0].message


def test_a_matrix_answered_from_the_cache_does_not_import_pyyaml(tmp_path: Path, corpus):
    """Every file a warm `infx matrix` reads is a hit (masters, runners, policy, recipe counts):
    it never imports the YAML reader, whose PyYAML import is ~10 ms of a warm run."""
    import os
    import subprocess
    import sys

    from testing.corpus import patched_corpus

    repo = patched_corpus(corpus, tmp_path / "corpus")
    probe = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('yaml' in sys.modules, 'infx.yamlio' in sys.modules, file=sys.stderr))\n"
        "sys.argv = ['infx', 'matrix', '--format', 'json']\n"
        "runpy.run_module('infx', run_name='__main__')\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
        "INFX_CACHE_DIR": str(tmp_path / "cache"),
    }
    env.pop("INFX_NO_CACHE", None)
    runs = [
        subprocess.run([sys.executable, "-c", probe], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
        for _ in range(2)
    ]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr
    assert runs[0].stdout == runs[1].stdout
    assert runs[0].stderr.splitlines()[-1] == "True True"  # cold: parsed
    assert runs[1].stderr.splitlines()[-1] == "False False"  # warm: every answer from the cache


def test_a_file_past_the_size_limit_is_reported_with_its_real_size(tmp_path: Path, monkeypatch):
    from infx.yamlio import MAX_BYTES

    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("INFX_NO_CACHE", raising=False)
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a: " + b"x" * MAX_BYTES + b"\n")
    expected = f"the file is {MAX_BYTES + 4:,} bytes; the limit is {MAX_BYTES:,}"
    for doc, problems in (load_yaml(path), yamlcache.load_yaml_cached(path)):
        assert doc is None and [(p.rule, p.message) for p in problems] == [("yaml-too-large", expected)]
