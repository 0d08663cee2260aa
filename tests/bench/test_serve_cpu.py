"""The served round's CPU breakdown (bench.serve_cpu) on a tiny load."""

from __future__ import annotations

from bench import serve_cpu


class Index:
    def __init__(self) -> None:
        self.searched: list[str] = []

    def search(self, query: str, top_k: int, **options: object) -> list[str]:
        self.searched.append(query)
        return [f"{query}/{top_k}"]

    def cosine(self, query: str, node_id: str) -> float:
        self.searched.append(f"cosine {node_id}")
        return 0.5


def test_a_replayed_index_answers_a_recorded_search_without_searching():
    index = Index()
    replayed = serve_cpu.Replayed(index)
    with replayed.installed():
        assert index.search("warranty", 4, mode="hybrid") == ["warranty/4"]
        replayed.replaying = True
        assert index.search("warranty", 4, mode="hybrid") == ["warranty/4"]
        assert index.cosine("warranty", "p1") == 0.5
        assert index.cosine("warranty", "p1") == 0.5
    assert index.searched == ["warranty", "cosine p1"]
    assert "search" not in vars(index)  # the index's own methods again


def test_the_breakdown_adds_up_to_the_rounds_cpu(tmp_path):
    result = serve_cpu.measure(1, 1, str(tmp_path / "s.sqlite"))
    assert [run["searches"] for run in result["runs"]] == ["as served", "replayed"]
    parts = (result["searches_ms_per_round"], result["store_ms_per_round"])
    assert result["store_ms_per_round"] > 0
    assert round(sum(parts) + result["rest_ms_per_round"], 2) == result["cpu_ms_per_round"]
