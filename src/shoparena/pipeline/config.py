"""The pipeline's one configuration: a section per stage, an embedded default and the paper preset.

Each stage hashes only its own section (plus its inputs' hashes, see :mod:`shoparena.pipeline.dag`), so
editing ``sft`` re-runs SFT and what reads its model, never the catalog or the firehose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo

from shoparena.arena.firehose import FirehoseConfig
from shoparena.corpus.config import CorpusConfig
from shoparena.corpus.views import normalize_selection
from shoparena.eval.policy_eval import EvalSettings
from shoparena.formats.profiles import ProfileName, RenderProfile
from shoparena.pipeline.checks import PipelineConfigError, check_pipeline_config
from shoparena.runs.config import config_fields, deep_merge
from shoparena.runs.files import RunFileError, load_yaml

#: Torch's default (every core) unless set: on this 2-core VM one thread made copy pretraining 2.2x slower
#: (2.0 vs 0.9 s/step beside niced neighbours), while beside equal-priority busy processes a second thread
#: that waits at barriers cost 1.45x (docs/benchmarks.md, "Torch threads under contention").
TORCH_THREADS_HELP = "Torch intra-op threads of this stage (None: torch's default; 1 beside other jobs)."


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CatalogSection(_Section):
    products: int = Field(default=5000, ge=100, description="Synthetic catalog size.")
    seed: int = 42
    workers: int = Field(default=2, ge=1, description="Generator worker processes.")


class IndexSection(_Section):
    k1: float = 0.9
    b: float = 0.4


class BankSection(_Section):
    problems: int = Field(
        default=1200, ge=4, description="Synthesised problems (split over the four intents)."
    )
    seed: int = 42
    public_size: int = Field(default=150, ge=1, description="Problems per public race suite.")
    public_versions: int = Field(
        default=3, ge=1, description="Public suite versions (rotated between races)."
    )
    reserve: int = Field(default=30, ge=0, description="Problems kept back for rotating public suites.")
    heldout: int = Field(default=48, ge=1, description="Held-out evaluation size (whole leak clusters).")
    hidden: int = Field(default=20, ge=0, description="Hidden race bank size.")


class ReferenceSection(_Section):
    """The rule-based planner on the held-out partition: the teacher's ceiling beside base and student."""

    agent: str = "planner"
    similarity: Literal["exact", "lexical", "embedding"] = Field(
        default="lexical", description="Title backend for scoring (exact | lexical | embedding)."
    )

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, value: str) -> str:
        from shoparena.agents import AGENTS

        if value not in AGENTS:
            raise ValueError(f"unknown agent {value!r}; known: {sorted(AGENTS)}")
        return value


#: The embedded default's miners (a lean day that fits the laptop budget): a regular agentic teacher the
#: filter keeps (baskets built item by item: docs/training.md), a sub-task miner it rejects (and recovers),
#: the no-LLM shortcut and a malformed miner.
EMBEDDED_POPULATION: list[tuple[str, str, str]] = [
    ("agentic-regular", "agentic", "regular"),
    ("subtask-careful", "subtask", "careful"),
    ("shortcut", "shortcut", ""),
    ("malformed", "faulty", ""),
]


#: The fields of ``firehose.options``: every FirehoseConfig field but the section's own and those the stage
#: fills in (the partition suites, the index, the directory; workers, executor, Ray from the top level).
FirehoseOptions = config_fields(
    FirehoseConfig,
    exclude={
        *("suites", "index", "out", "races", "problems_per_race", "seed", "timeout_s"),
        *("workers", "executor", "ray_address"),
    },
    name="FirehoseOptions",
    doc="Further ``FirehoseConfig`` fields of the firehose stage (teachers, population, parallel_races).",
)

#: The fields of ``corpus.options``: every CorpusConfig field but the section's own and those the stage fills
#: in (the race directories, the output directory).
CorpusOptions = config_fields(
    CorpusConfig,
    exclude={"run_dirs", "out", "recover", "render_profile"},
    name="CorpusOptions",
    doc="Further ``CorpusConfig`` fields of the corpus stage (filter, gates, split, tokenizer, workers).",
)


class FirehoseSection(_Section):
    """Arena races over the rotating public suites with the miner population (shoparena.arena.firehose)."""

    races: int = Field(default=3, ge=1, description="Races (each on a rotated public suite).")
    problems_per_race: int = Field(default=150, ge=1)
    seed: int = 0
    extra_pools: list[str] = Field(
        default_factory=list,
        description="Partition pools raced after the public suites (train: more problems for the corpus); "
        "never heldout or hidden.",
    )
    timeout_s: float = Field(default=30.0, gt=0, description="Per-problem sandbox limit.")

    @field_validator("extra_pools")
    @classmethod
    def _open_pools(cls, value: list[str]) -> list[str]:
        closed = sorted(set(value) & {"heldout", "hidden"})
        if closed:
            raise ValueError(f"{closed}: the held-out and hidden pools never feed the corpus")
        return value

    options: FirehoseOptions = Field(  # type: ignore[valid-type]
        default_factory=lambda: FirehoseOptions.model_validate(
            {"population": [list(m) for m in EMBEDDED_POPULATION]}
        ),
        description="Further FirehoseConfig fields (teachers, population), typed by FirehoseConfig.",
    )


class JudgeSection(_Section):
    """The firehose judges every race with the offline rubric; an LLM judge re-judges the race directories."""

    judge: Literal["rubric", "llm"] = Field(default="rubric", description="rubric | llm.")
    backend: str | None = Field(
        default=None, description="LLM judge backend spec (transformers:DIR, openai:URL)."
    )

    @field_validator("backend")
    @classmethod
    def _backend_spec(cls, value: str | None) -> str | None:
        from shoparena.llm.factory import parse_backend_spec

        if value:
            parse_backend_spec(value)  # a ValueError naming what is wrong with the spec
        return value

    @model_validator(mode="after")
    def _llm_needs_a_backend(self) -> JudgeSection:
        if self.judge == "llm" and not self.backend:
            raise ValueError("the llm judge needs a backend spec (judge.backend)")
        return self


class CorpusSection(_Section):
    """The corpus stage: ``corpus build``'s defaults (``CorpusConfig``), the same in both."""

    recover: bool = FieldInfo.merge_field_infos(CorpusConfig.model_fields["recover"])
    render_profile: ProfileName = FieldInfo.merge_field_infos(
        CorpusConfig.model_fields["render_profile"],
        description="Render profile of the views, and of base and student evaluation (upstream | compact).",
    )

    options: CorpusOptions = Field(  # type: ignore[valid-type]
        default_factory=CorpusOptions,
        description="Further CorpusConfig fields (filter, gates, split), typed by CorpusConfig.",
    )


class ModelSection(_Section):
    """The student's starting point; base evaluation depends on it, not on the SFT knobs."""

    base: str = Field(
        default="student-word",
        description="student-word (built over this run's catalogue) | tiny | student-cpu | smollm2 | a model "
        "folder | a hub id.",
    )
    seed: int = Field(default=0, description="student-word: seed of the random weights.")
    layers: int = Field(default=2, ge=1, description="student-word: transformer layers.")
    hidden: int = Field(default=128, ge=64, description="student-word: hidden size (heads of 64).")
    pretrain_steps: int = Field(
        default=400, ge=0, description="student-word: self-supervised copy-pretraining steps (0: none)."
    )
    pretrain_items: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="student-word: share of pretraining pairs that list a training request's items "
        "(U2,U3,...) instead of copying a text (shoparena.train.pretrain.item_pairs).",
    )
    threads: int | None = Field(default=None, ge=1, description=TORCH_THREADS_HELP)


class SFTSection(_Section):
    preset: str = Field(default="student-word", description="A training preset name or a train YAML file.")
    select: Literal["kept", "kept+recovered", "kept+failed", "raw"] = Field(
        default="kept", description="data.select of the student's SFT (`unfiltered`: deprecated kept+failed)."
    )
    trainer: dict[str, Any] = Field(default_factory=dict, description="TRL SFTConfig fields over the preset.")
    threads: int | None = Field(default=None, ge=1, description=TORCH_THREADS_HELP)

    @field_validator("select", mode="before")
    @classmethod
    def _current_selection(cls, value: object) -> object:
        return normalize_selection(value)


class EvalSection(EvalSettings):
    """The base and student evaluations: :class:`shoparena.eval.policy_eval.EvalSettings`, the settings
    :func:`~shoparena.eval.policy_eval.evaluate_policy` takes (``EvalConfig``'s fields, the pipeline's
    defaults)."""


class ReportSection(_Section):
    examples: int = Field(default=3, ge=0, description="Example trajectories rendered as conversations.")


class PipelineConfig(_Section):
    """``pipeline.yaml``: every stage's knobs."""

    name: str = "quickstart"
    preset: str = "default"
    executor: Literal["process", "ray"] = Field(default="process", description="Where episode tasks run.")
    workers: int | None = Field(
        default=None,
        ge=1,
        description="Episode workers (processes or Ray CPUs) and sandboxes per firehose race (None: from the "
        "machine, as the commands do; in no stage hash).",
    )
    ray_address: str | None = Field(default=None, description="Existing Ray cluster (None: local ray.init).")
    catalog: CatalogSection = Field(default_factory=CatalogSection)
    index: IndexSection = Field(default_factory=IndexSection)
    bank: BankSection = Field(default_factory=BankSection)
    reference: ReferenceSection = Field(default_factory=ReferenceSection)
    firehose: FirehoseSection = Field(default_factory=FirehoseSection)
    judge: JudgeSection = Field(default_factory=JudgeSection)
    corpus: CorpusSection = Field(default_factory=CorpusSection)
    model: ModelSection = Field(default_factory=ModelSection)
    sft: SFTSection = Field(default_factory=SFTSection)
    eval: EvalSection = Field(default_factory=EvalSection)
    report: ReportSection = Field(default_factory=ReportSection)


#: ``make student``: the embedded default's stages with an hour of CPU training, on a world with more
#: distinct basket problems (docs/fidelity.md, "The student preset": chosen from a scaling curve on two
#: worlds' eval splits and never-raced train-pool problems, never on the held-out partition). A larger
#: catalogue keeps four balanced intents in a 3,600-problem bank (5,000 products run out of web and voucher
#: problems past ~1,200), and the firehose races 2,000 never-public train-pool problems after the public
#: suites: about eight times the kept rows of the default, most of them baskets.
STUDENT_PRESET: dict[str, Any] = {
    "name": "student",
    "preset": "student",
    "catalog": {"products": 15000},
    "bank": {"problems": 3600},
    "firehose": {"races": 4, "problems_per_race": 2000, "extra_pools": ["train"]},
    "model": {"layers": 2, "hidden": 128, "pretrain_steps": 400},
    # Eight epochs: on both worlds' eval splits and never-raced pools, eight epochs of the 2 x 128 student
    # solved more baskets than four, and more than a 4 x 256 student at two (docs/fidelity.md, c1/c3/c4).
    "sft": {"trainer": {"num_train_epochs": 8}},
}

#: The paper's full-scale run: 2.5M products, an 18k-trajectory firehose, Qwen3-4B on a GPU behind vLLM.
#: Where the GPU recipe differs from the student's: numbers (scale, batch, context), the model, the engine
#: (vLLM, Ray) and the render profile the model reads; every stage and every other setting is the student
#: preset's (tests/pipeline/test_config.py checks that the two differ only in these keys).
PAPER_DIFFERS_IN = (
    "name", "preset", "executor", "workers", "catalog", "bank", "firehose.races",
    "firehose.problems_per_race", "firehose.timeout_s", "firehose.options",
    "corpus.render_profile", "judge", "model", "sft", "eval",
)  # fmt: skip

PAPER_PRESET: dict[str, Any] = deep_merge(STUDENT_PRESET, {
    "name": "paper",
    "preset": "paper",
    "executor": "ray",
    "workers": 16,
    "catalog": {"products": 2_500_000, "workers": 16},
    "bank": {
        "problems": 4000,
        "public_size": 200,
        "public_versions": 10,
        "reserve": 400,
        "heldout": 600,
        "hidden": 400,
    },
    # 67 races x 30 problems x the 9-miner default population = 18,090 trajectories (the paper: 18,043).
    "firehose": {"races": 67, "problems_per_race": 30, "timeout_s": 300.0, "options": {}},
    # The paper's corpus and Qwen3-4B see upstream's text (ShoppingBench tools, full JSON results).
    "corpus": {"render_profile": RenderProfile.UPSTREAM.value},
    "judge": {"judge": "llm", "backend": "openai:http://localhost:8000/v1#Qwen/Qwen3-4B"},
    "model": {"base": "Qwen/Qwen3-4B"},
    "sft": {"preset": "qwen3-4b", "trainer": {"num_train_epochs": 2, "learning_rate": 1e-5}},
    "eval": {
        "samples": 8,
        "temperature": 0.7,
        "max_tokens": 2048,
        "max_steps": 30,
        "server": "http://localhost:8000/v1",
        "options": {"concurrency": 64, "request_timeout_s": 600},
    },
})  # fmt: skip

#: A few minutes on 2 cores, to try a change before the default's run: the same stages and miners on a
#: 1,000-product catalogue, two races of 24 problems, a smaller pretraining and SFT, 16 held-out problems.
SMALL_PRESET: dict[str, Any] = {
    "name": "small",
    "preset": "small",
    "catalog": {"products": 1000},
    "bank": {
        "problems": 120,
        "public_size": 24,
        "public_versions": 2,
        "reserve": 8,
        "heldout": 16,
        "hidden": 4,
    },
    "firehose": {"races": 2, "problems_per_race": 24},
    "model": {"pretrain_steps": 100},
    "sft": {"trainer": {"num_train_epochs": 3}},
}

PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "small": SMALL_PRESET,
    "student": STUDENT_PRESET,
    "paper": PAPER_PRESET,
}


def load_pipeline_config(path: str | Path | None = None, *, preset: str | None = None) -> PipelineConfig:
    """The preset (default: embedded) overlaid with ``path``'s YAML; errors name the file and field."""
    name = preset or "default"
    if name not in PRESETS:
        raise PipelineConfigError(f"unknown preset {name!r}; known: {sorted(PRESETS)}")
    data: dict[str, Any] = dict(PRESETS[name])
    where = f"preset {name}"
    if path is not None:
        where = str(path)
        try:
            loaded = load_yaml(path, what="pipeline config") or {}
        except (OSError, RunFileError) as exc:
            raise PipelineConfigError(f"cannot read pipeline config: {exc}") from None
        if not isinstance(loaded, dict):
            raise PipelineConfigError(f"{path}: top level must be a mapping, got {type(loaded).__name__}")
        data = deep_merge(data, loaded)
    try:
        config = PipelineConfig.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise PipelineConfigError(f"{where}: field {field}: {first['msg']}") from None
    check_pipeline_config(config, where)  # every section as its stage reads it, before any stage runs
    return config
