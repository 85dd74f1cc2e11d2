"""``rooms.open_store``: which backend, from the argument or the environment; and the
package's own rule: standard library and ``redis`` only."""

from __future__ import annotations

import ast
import sys
import tempfile
from pathlib import Path

import pytest

from rooms import open_store
from rooms.redis_store import RedisStore
from rooms.sqlite_store import FILE_NAME, SqliteStore

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    monkeypatch.delenv("ROOM_STORE_URL", raising=False)
    monkeypatch.delenv("ROOM_STORE_DIR", raising=False)


def test_nothing_set_is_sqlite_in_the_temp_folder():
    for url in (None, "", "  "):
        store = open_store(url)
        assert isinstance(store, SqliteStore)
        assert store.path == Path(tempfile.gettempdir()) / FILE_NAME


def test_the_folder_from_the_argument_else_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOM_STORE_DIR", str(tmp_path / "env"))
    assert open_store().folder == tmp_path / "env"
    assert open_store(folder=tmp_path / "arg").folder == tmp_path / "arg"


def test_redis_from_the_argument_else_the_environment(monkeypatch):
    store = open_store("redis://127.0.0.1:6390/2")
    assert isinstance(store, RedisStore)
    assert store.client.connection_pool.connection_kwargs["port"] == 6390
    monkeypatch.setenv("ROOM_STORE_URL", "redis://127.0.0.1:6391/0")
    assert isinstance(open_store(), RedisStore)
    assert isinstance(open_store(""), SqliteStore)  # an empty argument means SQLite
    assert isinstance(open_store("rediss://example.invalid:6380/0"), RedisStore)  # TLS


@pytest.mark.parametrize(
    "url", ["sqlite:///tmp/x.db", "postgres://user:secret@db/rooms", "127.0.0.1:6379", "http://x"]
)
def test_anything_else_is_a_clear_error(url):
    with pytest.raises(ValueError, match="redis://") as info:
        open_store(url)
    assert "secret" not in str(info.value)


def test_the_package_imports_only_the_standard_library_and_redis():
    allowed = set(sys.stdlib_module_names) | {"redis", "rooms"}
    for path in (ROOT / "rooms").glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{path.name} imports {name}"
