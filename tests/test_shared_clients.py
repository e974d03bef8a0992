"""SharedClients: the runs of a batch share SDK clients, sixteen runs a client, so no pool grows past what
httpx scans cheaply and the SDK keeps alive (tests/test_batch.py plays real batches through them)."""

from __future__ import annotations

from workstation.run.providers.adapter import ProviderOptions
from workstation.run.providers.agent import make_adapter
from workstation.studies.batch.execute import MAX_CLIENTS, RUNS_PER_CLIENT, SharedClients


def adapters(n: int, base_url: str = "http://127.0.0.1:9/v1"):
    return [make_adapter("compat:m", ProviderOptions(base_url=base_url)) for _ in range(n)]


def test_sixteen_runs_a_client_in_the_order_they_start():
    shared = SharedClients()
    try:
        runs = adapters(2 * RUNS_PER_CLIENT + 3)
        for a in runs:
            shared.attach(a, "sk-test")
        clients = [a.client for a in runs]
        assert len({id(c) for c in clients}) == 3
        assert all(c is clients[0] for c in clients[:RUNS_PER_CLIENT])
        assert clients[RUNS_PER_CLIENT] is not clients[0]
        other = adapters(1, "http://127.0.0.1:8/v1")[0]  # another endpoint: a client of its own
        shared.attach(other, "sk-test")
        assert all(other.client is not c for c in clients)
    finally:
        shared.close()


def test_at_most_max_clients_an_endpoint():
    shared = SharedClients()
    try:
        runs = adapters(RUNS_PER_CLIENT * (MAX_CLIENTS + 2))
        for a in runs:
            shared.attach(a, "sk-test")
        assert len({id(a.client) for a in runs}) == MAX_CLIENTS
        assert runs[-1].client is runs[RUNS_PER_CLIENT].client  # past the last, round again
    finally:
        shared.close()
