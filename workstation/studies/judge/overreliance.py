"""Text-history over-reliance (the paper's Table 9): how often a setting's model followed an earlier
text cue that the current frames contradicted, and Fisher's exact test between two groups of settings.

The judge answers ``text_cue_followed`` on every verdict; a setting's count is the verdicts with
true out of the verdicts that answered. ``--groups A,B/C,D`` names the two groups (setting labels,
comma-separated, the groups split by a slash); each group's counts are pooled.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from workstation.base.errors import UserError
from workstation.studies.judge.records import GroupCounts, Overreliance, SettingCounts
from workstation.studies.judge.stats import fisher_exact


def parse_groups(text: str) -> tuple[list[str], list[str]]:
    left, sep, right = (text or "").partition("/")
    a = [s.strip() for s in left.split(",") if s.strip()]
    b = [s.strip() for s in right.split(",") if s.strip()]
    if not sep or not a or not b:
        raise UserError(f"--groups {text!r}: write two groups of setting labels as A,B/C,D", "groups")
    if set(a) & set(b):
        raise UserError(f"--groups {text!r}: {min(set(a) & set(b))} is in both groups", "groups")
    return a, b


def check_groups(settings: Collection[str], a: list[str], b: list[str]) -> None:
    """UserError naming the first group member that is no judged setting (checked before anything is asked)."""
    unknown = [s for s in a + b if s not in settings]
    if unknown:
        raise UserError(f"--groups: no judged setting {unknown[0]!r}; the settings are "
                        f"{', '.join(sorted(settings)) or 'none'}", "groups")


def compare_groups(per_setting: Mapping[str, SettingCounts], a: list[str], b: list[str]) -> Overreliance:
    """Pooled counts per group and the test between them (per_setting from a judge summary)."""
    check_groups(list(per_setting), a, b)

    def pooled(names: list[str]) -> GroupCounts:
        k = sum(per_setting[s].text_cue_followed for s in names)
        n = sum(per_setting[s].text_cue_asked for s in names)
        return GroupCounts(names, k, n)

    ga, gb = pooled(a), pooled(b)
    return Overreliance(ga, gb, fisher_exact(ga.followed, ga.asked, gb.followed, gb.asked))
