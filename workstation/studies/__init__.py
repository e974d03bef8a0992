"""Everything built on runs: reports, judge studies, improvement rounds, the arena, exports, batches,
QA sets, human sessions, prompt packs and the server pre-flight."""
