"""The serving benchmark's harness on a tiny load: it counts what the store holds."""

from __future__ import annotations

from bench import serve, serve_load, serve_report, serve_wakes, serve_worker


def test_union_counts_overlapping_calls_once():
    assert serve_worker.union_ms([(0.0, 0.1), (0.05, 0.15), (0.3, 0.4)]) == 250.0


def test_a_tiny_load_on_one_sqlite_worker_loses_and_duplicates_nothing(tmp_path):
    result = serve.measure("1 worker, SQLite", 1, str(tmp_path / "s.sqlite"), 2, 0.01)
    assert (result["rounds"], result["lost"], result["duplicated"]) == (6, 0, 0)
    assert result["unexpected_outcomes"] == 0
    assert result["llm_ms_p50"] > 0
    assert "| 1 worker, SQLite | all at once |" in serve_report.section(
        {
            "command": "x",
            "date": "d",
            "machine": {"cpus": 2, "load_average_1min": 1.0},
            "conversations": 2,
            "latency_s": 0.01,
            "pacing": {"ramp_s": 5.0, "think_s": 5.0},
            "runs": [result],
            "targets": serve.TARGETS,
        }
    )


def test_workers_run_the_code_of_another_commit_for_a_paired_run(tmp_path):
    (tmp_path / "before").mkdir()
    before = serve.checkout("HEAD", tmp_path / "before")
    assert (before / "runner" / "service" / "pipelines.py").is_file()
    result = serve.measure(
        "before (HEAD)", 1, str(tmp_path / "s.sqlite"), 2, 0.01, serve_load.Pacing(0.1, 0.1), before
    )
    assert (result["rounds"], result["lost"], result["duplicated"]) == (6, 0, 0)
    table = serve_report.paired_section(
        {"against": "HEAD", "paired": [{**result, "pair": 1, "load_average_1min": 1.0}]}
    )
    assert "| 1 | before (HEAD) |" in table


def test_the_wake_costs_are_measured_and_said_in_the_section():
    wakes = serve_wakes.wake_costs(tries=3)
    assert set(wakes) == {"sleep_wake_us", "hop_us", "hop_after_idle_us", "work_after_idle_ratio"}
    assert all(value > 0 for value in wakes.values())
    paragraph = serve_report.wakes_paragraph(wakes)
    assert f"{wakes['hop_after_idle_us']:g} µs right after idling" in paragraph


def test_a_rounds_own_cpu_is_reported_beside_the_paced_workers_and_judged_on_its_target(tmp_path):
    from bench import serve_cpu, summary_cost

    measured = serve_cpu.measure(1, 1, str(tmp_path / "s.sqlite"))
    back_to_back = {key: value for key, value in measured.items() if key != "runs"}
    paced = {"setup": "2 workers, PostgreSQL", "arrivals": "paced", "worker_cpu_ms_per_round": 9.9}
    results = {"back_to_back": back_to_back, "targets": serve.TARGETS}
    paragraph = serve_report.back_to_back_paragraph(results)
    assert f"**{back_to_back['cpu_ms_per_round']} ms** of CPU a round" in paragraph
    [row] = summary_cost.cpu_rows(results, paced)
    assert row[1] == f"{back_to_back['cpu_ms_per_round']} ms" and "9.9 ms" in row[2]
    cheap = {**results, "back_to_back": {**back_to_back, "cpu_ms_per_round": 4.9}}
    dear = {**results, "back_to_back": {**back_to_back, "cpu_ms_per_round": 5.1}}
    assert summary_cost.cpu_rows(cheap, paced)[0][4] == "met"
    assert "missed" in summary_cost.cpu_rows(dear, paced)[0][4]
