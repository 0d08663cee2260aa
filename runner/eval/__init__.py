"""`runner eval`: a pipeline's quality over a question set, compared with an earlier run.

    from runner.eval.evaluate import EvalOptions, evaluate
    from runner.eval.setup import EvalSpec

    outcome = evaluate(EvalSpec(Path("pipelines/support/support.yaml")),
                       Path("pipelines/support/eval/questions.csv"), EvalOptions(jobs=4))

The modules, in the order a run goes through them: `questions` reads and checks the set
(`model` is its typed form); `setup` opens the runtime as `runner run` does; `asking` asks one
question through the application layer and `metrics`, `groundedness` and `judge` score it;
`local` and `ray_runner` ask them all (`progress` shows how far); `results` writes the folder;
`totals` sums the metrics; `compare` diffs with a baseline; `gates`, `formats` and
`report_html` (with `plots`) say what came out. docs/eval.md is the user's side of it.
"""
