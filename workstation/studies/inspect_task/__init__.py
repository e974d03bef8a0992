"""Inspect AI running our games: ``inspect eval atari_workstation/atari -T game=breakout -T seeds=0..4
--model PROVIDER/MODEL``.

The task (registered by the top-level ``atari_workstation`` package through the ``inspect_ai`` entry point;
installed with ``atari-workstation[inspect]``) has one sample per seed. Its solver plays the seed through our
turn engine, on our run spec's checks and our protocol, with the Inspect model as the agent: the engine runs
in a worker thread and each turn's prompt comes back to the sample's own task, which calls the model (so
Inspect logs every call as it logs its own), and the reply goes back to the engine. Our recording is written
beside Inspect's log (``out``; default ``atari-recordings`` in INSPECT_LOG_DIR or ./logs) and verifies like any other.

``agent`` holds the agent the engine sees; ``play`` the solver and scorers; inspect-ai is imported only here.
"""
