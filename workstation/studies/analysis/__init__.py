"""The paper's analysis of a batch: results table, statistics, report, plots."""
