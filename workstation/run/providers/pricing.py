"""What a call cost: token usage times the list prices in ``prices.toml``.

The table ships with the package, carries a ``version`` and an ``as_of`` date,
and can be extended or overridden by a file of the same layout named by
``WORKSTATION_PRICES`` or passed explicitly. A model missing from the table has
no cost (None), never an error; ``price_note`` says why.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from workstation.engine.calls import Usage
from workstation.run.providers.spec import ProviderConfigError

ENV_VAR = "WORKSTATION_PRICES"
_DATED = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8})$")


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    cache_read: float
    cache_write: float
    output: float

    def cost(self, usage: Usage) -> float:
        return (usage.input_tokens * self.input + usage.cache_read_tokens * self.cache_read
                + usage.cache_write_tokens * self.cache_write + usage.output_tokens * self.output) / 1e6


@dataclass
class PriceTable:
    version: str
    as_of: str
    prices: dict[tuple[str, str], Price] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def lookup(self, provider: str, model: str) -> Price | None:
        """Exact name first, then without a ``models/`` prefix or a date suffix."""
        name = model.removeprefix("models/")
        for candidate in (model, name, _DATED.sub("", name)):
            if (provider, candidate) in self.prices:
                return self.prices[(provider, candidate)]
        return None

    def note(self, provider: str, model: str) -> str | None:
        """Why a model has no cost, or None when it has one."""
        if self.lookup(provider, model) is not None:
            return None
        return (f"no price for {provider}:{model} in the price table (version {self.version}, "
                f"as of {self.as_of}); cost is not tracked. Add it to a file named by {ENV_VAR}.")


def load_prices(path: str | Path | None = None) -> PriceTable:
    """The shipped table, overlaid with ``path`` or else the file named by ``WORKSTATION_PRICES``."""
    shipped = resources.files("workstation.run.providers").joinpath("prices.toml").read_text()
    table = PriceTable("", "")
    _merge(table, tomllib.loads(shipped), "prices.toml (shipped)")
    extra = path or os.environ.get(ENV_VAR)
    if extra:
        p = Path(extra)
        try:
            data = tomllib.loads(p.read_text())
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ProviderConfigError(f"cannot read price file {p}: {exc}; fix it or unset {ENV_VAR}", None, file=str(p)) from None
        _merge(table, data, str(p))
    return table


def _merge(table: PriceTable, data: dict[str, Any], origin: str) -> None:
    table.version = str(data.get("version", table.version or "?"))
    table.as_of = str(data.get("as_of", table.as_of or "?"))
    table.files.append(origin)
    for provider, models in data.items():
        if not isinstance(models, dict):
            continue
        for model, entry in models.items():
            try:
                base = float(entry["input"])
                table.prices[(provider, model)] = Price(
                    input=base,
                    cache_read=float(entry.get("cache_read", base)),
                    cache_write=float(entry.get("cache_write", base)),
                    output=float(entry["output"]),
                )
            except (KeyError, TypeError, ValueError):
                raise ProviderConfigError(
                    f"price file {origin}: entry {provider}.{model} needs numeric input and output prices", None, file=origin
                ) from None


@lru_cache(maxsize=1)
def _default_table(env_path: str | None) -> PriceTable:
    return load_prices(env_path)


def default_prices() -> PriceTable:
    """The table in effect (cached; re-read when ``WORKSTATION_PRICES`` changes)."""
    return _default_table(os.environ.get(ENV_VAR))


def cost_usd(usage: Usage | None, provider: str, model: str, table: PriceTable | None = None) -> float | None:
    """USD cost of ``usage`` at the table's prices; None without usage or without a price."""
    if usage is None:
        return None
    price = (table or default_prices()).lookup(provider, model)
    return None if price is None else price.cost(usage)
