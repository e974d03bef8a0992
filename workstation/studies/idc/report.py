"""``workstation report DIR`` on an IDC directory: the curve, the best-vs-final gap and the transfer table."""

from __future__ import annotations

import json
from pathlib import Path

from workstation.base.errors import UserError
from workstation.studies.idc import curve as C


def is_idc_dir(path: str | Path) -> bool:
    return (Path(path) / C.CURVE).is_file()


def report(path: str | Path, json_out: str | None = None, md_out: str | None = None) -> int:
    data = C.load_checked(Path(path))  # the curve and the ledger, checked as `verify` and a resume check them
    if data is None:
        raise UserError(f"{path}: no IDC there (curve.json)")
    root = Path(path).resolve()
    for flag, out in (("--json", json_out), ("--md", md_out)):
        if out and (Path(out).resolve() == root or root in Path(out).resolve().parents):
            raise UserError(f"{flag} {out} is inside the IDC it reports on ({path}); write the report elsewhere",
                            file=out)
    text = C.table_text(data)
    summary = {"curve": data, "best_vs_final": C.best_vs_final(data), "transfer": data.get("transfer", [])}
    if json_out:
        C.write_text(Path(json_out), json.dumps(summary, indent=1) + "\n")
    if md_out:
        C.write_text(Path(md_out), f"# Improvement rounds: {data.get('game')}\n\n```\n{text}\n```\n")
    print(text)
    return 0


__all__ = ["is_idc_dir", "report"]
