"""``infoppo eval``: sample, grade and report mean@k on the math benchmarks (thin layer over
``infoppo_cli.eval.run``)."""

from __future__ import annotations

from pathlib import Path

import typer

from infoppo_cli.errors import UsageError


def eval_command(
    model: str = typer.Option(
        None, "--model", "-m", help="Model directory (e.g. RUN/final) or Hugging Face id.", show_default=False
    ),
    bench: str = typer.Option(
        None,
        "--bench",
        "-b",
        help="amc23, aime24, aime25, aime26, beyondaime, a comma-separated list, or all. (default: all)",
        show_default=False,
    ),
    samples: int = typer.Option(None, "--samples", "-n", help="Samples per problem (k). (default: 16)"),
    temperature: float = typer.Option(
        None, "--temperature", help="Sampling temperature (0 = greedy). (default: 1.0)"
    ),
    top_p: float = typer.Option(None, "--top-p", help="Nucleus sampling threshold. (default: 1.0)"),
    max_tokens: int = typer.Option(
        None,
        "--max-tokens",
        help="Max new tokens per sample (default: the length the model was trained with when it is an "
        "`infoppo train` run's final/, else 10240)",
    ),
    template: str = typer.Option(
        None, "--template", help="Prompt template, as in training: dapo, boxed or raw. (default: dapo)"
    ),
    backend: str = typer.Option(
        None,
        "--backend",
        help="vllm (needs a CUDA GPU) or hf (transformers, also on CPU) (default: vllm; without a GPU "
        "the command stops and says to pass --backend hf)",
    ),
    tensor_parallel: int = typer.Option(None, "--tensor-parallel", help="GPUs per vLLM engine. (default: 1)"),
    seed: int = typer.Option(None, "--seed", help="Sampling seed. (default: 0)"),
    out: Path = typer.Option(
        None,
        "--out",
        "-o",
        help="Output directory for samples.jsonl and metrics.json. (default: evals/<model>)",
        show_default=False,
    ),
    resume: bool = typer.Option(
        False,
        "--resume",
        help="Continue the run saved in --out with its saved settings (options given here override them). "
        "Rerunning the same command resumes too.",
    ),
    data_file: Path = typer.Option(
        None,
        "--data-file",
        help="Local jsonl/parquet/csv/json file replacing one bench's Hub data.",
        show_default=False,
    ),
    responses: Path = typer.Option(
        None,
        "--responses",
        help="Grade this JSONL of existing responses (id, sample, response[, num_tokens, finish_reason]) "
        "instead of generating.",
        show_default=False,
    ),
    workers: int = typer.Option(None, "--workers", help="Grading processes. (default: all cores)"),
    batch_size: int = typer.Option(
        None, "--batch-size", help="Sequences per generate() call with --backend hf."
    ),
    grade_timeout: float = typer.Option(
        None, "--grade-timeout", help="Seconds before one response's grading is abandoned. (default: 10)"
    ),
    list_benches: bool = typer.Option(False, "--list-benches", help="List the benchmark registry and exit."),
) -> None:
    """Evaluate a model on the math benchmarks: mean@k (paper's Score), its SE, pass@k, maj@k, length."""
    from infoppo_cli.cli.console import console

    if list_benches:
        from infoppo_cli.eval.benchmarks import bench_table

        console.print(bench_table())
        return

    from infoppo_cli.eval.run import default_out_dir, print_report, resolve_settings, run_evaluation

    if out is None:
        if model is None and responses is None:
            raise UsageError("--model is required (or --responses FILE to grade existing responses)")
        out = default_out_dir(model, None if responses is None else str(responses))
    options = {
        "model": model,
        "benches": bench,
        "samples": samples,
        "temperature": temperature,
        "top_p": top_p,
        "max_tokens": max_tokens,
        "template": template,
        "backend": backend,
        "tensor_parallel": tensor_parallel,
        "seed": seed,
        "data_file": None if data_file is None else str(data_file),
        "responses": None if responses is None else str(responses),
        "workers": workers,
        "batch_size": batch_size,
        "grade_timeout": grade_timeout,
    }
    settings = resolve_settings(options, out, resume)
    metrics = run_evaluation(settings, out)
    print_report(metrics, out)
