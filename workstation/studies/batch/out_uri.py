"""An ``--out`` URI (``s3://bucket/prefix``, ``gs://...``, any scheme fsspec knows): recognised, checked, opened.

Every refusal is one line (a ``UserError``): fsspec or the scheme's package missing (saying what to
install), an unknown scheme, a malformed URI, a login in the URI (never echoed). Credentials come
from the environment only, and ``clean`` blots the environment's secrets out of any message.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from workstation.base.errors import UserError
from workstation.store.local_paths import URI_SCHEME as _SCHEME  # the one reading of `scheme://`

EXTRA = ".venv/bin/pip install -e '.[object-store]'"
STAGE_ENV = "WORKSTATION_OUT_STAGE"  # where stages go (default $XDG_CACHE_HOME/workstation/out)
TIMEOUT_ENV = "WORKSTATION_OUT_TIMEOUT"  # seconds to connect to the endpoint (default 10)
BUCKETED = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2"}
_S3_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSWORD|CREDENTIAL|KEY", re.I)


def scheme_of(out: str | None) -> str | None:
    m = _SCHEME.match(out or "")
    return m.group(1).lower() if m else None


def is_remote(out: str | None) -> bool:
    """``--out`` names object storage (a URI whose scheme is not ``file``)."""
    s = scheme_of(out)
    return s is not None and s != "file"


def local_out(out: str) -> str:
    """``file:///x`` is the directory ``/x``; anything else is returned as given."""
    return urlsplit(out).path if scheme_of(out) == "file" else out


def clean(text: str) -> str:
    """One line, with every credential in the environment blotted out."""
    for name, value in os.environ.items():
        if len(value) >= 8 and _SECRET_NAME.search(name) and value in text:
            text = text.replace(value, "***")
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def stage_of(uri: str) -> Path:
    root = os.environ.get(STAGE_ENV) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "workstation" / "out"
    return Path(root) / hashlib.sha256(uri.rstrip("/").encode()).hexdigest()[:20]


def why(e: BaseException) -> str:
    return clean(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__)


def unreachable(shown: str, e: BaseException) -> UserError:
    """The one line for a URI the backend could not reach: no credentials found, or the endpoint or network."""
    if "credential" in why(e).lower():  # botocore's NoCredentialsError, PartialCredentialsError, ...
        return UserError(f"{shown}: no credentials ({why(e)}); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                         "or a profile (AWS_PROFILE), as docs/object-store.md shows")
    return UserError(f"{shown}: cannot reach it ({why(e)}); check the endpoint (AWS_ENDPOINT_URL) and the network")


def check_uri(uri: str) -> tuple[str, str]:
    """(scheme, bucket) of a well-formed URI, else UserError (the URI is not echoed if it holds a password)."""
    try:
        parts = urlsplit(uri)
        has_login = parts.username is not None or parts.password is not None
    except ValueError as e:
        raise UserError(f"--out: not a URI ({e}); give a directory or a URI like s3://bucket/prefix") from None
    scheme = parts.scheme.lower()
    if has_login:
        raise UserError(f"--out {scheme}://...: the URI holds a login; put credentials in the environment "
                        "(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or the fsspec config), not in --out")
    if parts.query or parts.fragment:
        raise UserError(f"--out {uri}: a batch URI takes no ?query or #fragment; give scheme://bucket/prefix "
                        "(an S3 endpoint goes in AWS_ENDPOINT_URL)")
    bucket = parts.netloc
    if scheme in BUCKETED and not bucket:
        raise UserError(f"--out {uri}: no bucket; give {scheme}://BUCKET/prefix")
    if scheme in ("s3", "s3a") and not _S3_BUCKET.match(bucket):
        raise UserError(f"--out {uri}: {bucket!r} is not an S3 bucket name (3-63 lowercase letters, digits, "
                        "dots, hyphens); give s3://BUCKET/prefix")
    return scheme, bucket


def open_fs(uri: str, scheme: str) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError:
        raise UserError(f"--out {uri}: object storage needs fsspec (and s3fs for s3://): {EXTRA}") from None
    try:
        fsspec.get_filesystem_class(scheme)
    except ValueError:
        raise UserError(f"--out {uri}: unknown storage scheme {scheme}://; give a directory or a URI fsspec knows "
                        "(s3://, gs://, az://, memory://...)") from None
    except ImportError as e:
        raise UserError(f"--out {uri}: {clean(str(e))} ({EXTRA} covers s3://)") from None
    timeout = float(os.environ.get(TIMEOUT_ENV) or 10)
    kwargs: dict[str, Any] = {}
    if scheme in ("s3", "s3a"):
        kwargs["use_listings_cache"] = False  # another machine may write the same URI
        kwargs["config_kwargs"] = {"connect_timeout": timeout, "read_timeout": max(timeout, 30.0),
                                   "retries": {"max_attempts": 2}}
    try:
        fs, root = fsspec.core.url_to_fs(uri, **kwargs)
        return fs, str(root)
    except Exception as e:  # any backend's own way to refuse a URI
        raise UserError(f"--out {uri}: cannot open it ({why(e)})") from None


def fetch_results(uri: str) -> Path:
    """The URI's results.csv, copied to a local file (for ``report``); nothing is locked or written there."""
    scheme, bucket = check_uri(uri)
    fs, root = open_fs(uri, scheme)
    path = f"{root.rstrip('/')}/results.csv"
    try:
        if scheme in BUCKETED:
            fs.info(bucket)
        data = fs.cat_file(path)
    except FileNotFoundError:
        raise UserError(f"{uri}: no results.csv there (no bucket {bucket!r}, or no batch under that prefix yet); "
                        "give the URI a batch was run into with --out") from None
    except Exception as e:
        raise unreachable(uri, e) from None
    view = stage_of(uri).with_name(stage_of(uri).name + "-view")
    view.mkdir(parents=True, exist_ok=True)
    (view / "results.csv").write_bytes(data)
    return view / "results.csv"


__all__ = ["BUCKETED", "EXTRA", "STAGE_ENV", "TIMEOUT_ENV", "check_uri", "clean", "fetch_results", "is_remote",
           "local_out", "open_fs", "scheme_of", "stage_of", "why"]
