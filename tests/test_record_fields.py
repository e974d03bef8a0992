"""check_fields: a number out of its range is named with its bounds as written."""

from __future__ import annotations

import pytest

from workstation.store.records import RecordFileError, check_fields


def test_a_bound_is_written_in_full():
    fields = {"seed": ("int", False, 0, 2**32 - 1), "share": ("num", False, 0, 1.5)}
    with pytest.raises(RecordFileError, match=r"field 'seed' is -1, outside 0\.\.4294967295$"):
        check_fields({"seed": -1, "share": 1}, fields, "summary.json")
    with pytest.raises(RecordFileError, match=r"field 'share' is 2\.5, outside 0\.\.1\.5$"):
        check_fields({"seed": 1, "share": 2.5}, fields, "summary.json")
    assert check_fields({"seed": 4294967295, "share": 0.5}, fields, "summary.json")["seed"] == 4294967295
