"""--ray-address: a head that is not there is one line and exit 2, at once, with no batch directory made."""

from __future__ import annotations

import socket

import pytest

import workstation.cli as cli
from workstation.base.errors import UserError
from workstation.studies.batch.ray_address import check_ray_address, host_port

GRID = """name = "tiny"
games = ["breakout"]
seeds = "0..1"
[protocol]
frames = 30
[[settings]]
label = "random"
spec = "random"
"""


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address, says", [
    ("nohost", "give the head's host:port"),
    ("10.0.0.5:", "give the head's host:port"),
    ("10.0.0.5:port", "give the head's host:port"),
    ("1.2.3.4:99999", "give the head's host:port"),
    ("ray://:10001", "give the head's host:port"),
    ("CLOSED", "no Ray head there"),
    ("ray://CLOSED", "no Ray head there"),
])
def test_a_bad_address_is_one_line_exit_2_and_no_batch(tmp_path, capsys, address, says):
    address = address.replace("CLOSED", f"127.0.0.1:{closed_port()}")
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    code = cli.main(["batch", str(grid), "--out", str(tmp_path / "b"), "--executor", "ray",
                     "--ray-address", address, "--plain"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and says in err[0] and "Traceback" not in err[0], err
    assert "ray start --head" in err[0] or "host:port" in err[0]
    assert not (tmp_path / "b").exists()


def test_the_address_forms():
    assert host_port("auto") is None and host_port("local") is None
    assert host_port("10.0.0.5:6379") == ("10.0.0.5", 6379)
    assert host_port("ray://head.example:10001") == ("head.example", 10001)
    assert host_port("[::1]:6379") == ("::1", 6379)


def test_a_listening_address_passes_the_check():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        check_ray_address(f"127.0.0.1:{s.getsockname()[1]}")  # no error
    with pytest.raises(UserError, match="no Ray head there"):
        check_ray_address(f"127.0.0.1:{closed_port()}")
