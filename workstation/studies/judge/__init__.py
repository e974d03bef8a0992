"""Why a model failed: the blinded judge (sample, evidence, verdict, run), re-query, over-reliance, stuck, RAM truth."""
