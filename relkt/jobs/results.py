"""What the library's jobs return: the folder they wrote and what they found, in memory (no caller re-reads a
report from disk). `Evaluation` (relkt.jobs.scoring), `RunResult` (relkt.api) and `CrossvalResult`
(relkt.recipes.crossval) are the others."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relkt.errors import DataError


@dataclass
class CoverageResult:
    """What the coverage job wrote and found: `output` the report folder, `report` OUTPUT/report.json's content,
    `markdown` OUTPUT/report.md's; `table` the tokenizer table with `tokenizers_only`."""

    output: Path
    report: dict[str, Any]
    markdown: str
    table: str = ""

    @property
    def report_md(self) -> Path:
        return self.output / "report.md"


@dataclass
class TeachResult:
    """Where a teach run wrote its report, and what it found: `summary` is OUTPUT/teach.json's content, `coverage`
    the report's (`CoverageResult`)."""

    output: Path
    summary: dict[str, Any]
    coverage: CoverageResult | None = None

    @property
    def report(self) -> Path:
        return self.output / "report.md"


@dataclass
class InterpolateResult:
    """WiSE-FT's mixes: dev score per alpha, the alpha chosen, and where the chosen mix was exported (if asked)."""

    scores: dict[float, float]
    alpha: float
    metric: str
    output: Path | None = None
    results: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunResult:
    """A finished (or resumed-and-finished) stage run: its folder and `summary.json`. `best` is the best dev model's
    export, `spec` the encoder spec that reads it (e.g. `muse:RUN/best`) for scoring or as the next stage's teacher."""

    output_dir: Path
    summary: dict[str, Any]
    base_spec: str

    @property
    def best(self) -> Path:
        return self.output_dir / "best"

    @property
    def spec(self) -> str:
        from relkt.encoders.encoder_kind import kind_of  # deferred: TensorFlow

        return kind_of(self.base_spec).rebuild_spec(str(self.best))

    @property
    def best_metric(self) -> float:
        """The dev primary metric at the best step (`summary["best"]["value"]`); a DataError when the run has none."""
        best = self.summary.get("best") if isinstance(self.summary, dict) else None
        if not isinstance(best, dict) or "value" not in best:
            raise DataError(f"{self.output_dir}: the run has no best step in its summary (not trained, or no dev)")
        return float(best["value"])


@dataclass
class AuditResult:
    """Each encoder's tokenizer on a pool's texts: `table` to print, `report` ({split, texts, audits})."""

    table: str
    report: dict[str, Any]
