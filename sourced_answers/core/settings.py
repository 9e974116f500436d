"""一次运行的设置：由命令行入口（cli/config.py）从参数和环境变量建一次、检查一次，往下传；这里之下的代码不读
os.environ。默认值写在这里，参数解析和文档都从这里取。"""
import os
from dataclasses import dataclass, field
from pathlib import Path

from sourced_answers.checker import SupportRule
from sourced_answers.core.output_files import PlannedFile

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
DEFAULT_MODEL = "qwen2.5:1.5b"
DEFAULT_METASO_BASE = "https://metaso.cn/api/v1"
# --fix 默认请模型改写一轮
DEFAULT_FIX_ROUNDS = 1


@dataclass(frozen=True)
class TokenRate:
    """一个字大约算几个 token：汉字、其他字符各一个比例。默认是 Qwen、Llama 这类词表大的模型（汉字约一字一个，
    其他约四个字符一个，宁可估多）；自带的 SmolLM2 只会英文，一个汉字要两三个 token，启动它时用它自己的
    分词器量出来（local_serving）。"""
    han: float = 1.0
    other: float = 0.25


DEFAULT_RATE = TokenRate()


@dataclass(frozen=True)
class Config:
    """一次运行要用的一切。字段名和命令行参数一致（--max-chars → max_chars）。"""
    # 做什么：回答 question、比较模型（eval）或核对文件（verify）
    question: str | None = None
    eval: str | None = None
    verify: str | None = None
    models: list[str] = field(default_factory=list)
    # 秘塔
    demo: bool = False
    demo_pages: str | None = None  # None：按问题的语言选 nas 或 nas-en
    metaso_key: str = ""
    metaso_base: str = DEFAULT_METASO_BASE
    size: int = 5
    read: int = 2
    max_chars: int = 2000
    # 缓存
    cache_dir: Path | None = None  # None：找不到可用的缓存目录，不用缓存
    no_cache: bool = False
    refresh: bool = False
    cache_search_hours: float = 24.0
    cache_page_days: float = 7.0
    cache_max_mb: int = 200
    # 模型
    model: str = DEFAULT_MODEL
    model_url: str = DEFAULT_OLLAMA_URL  # --local-model 时是空的，直到本机模型服务启动（local_serving）
    local_model: bool = False
    max_tokens: int = 1024
    timeout: float | None = None
    started: float | None = None  # --timeout 从什么时候算起（time.monotonic()；参数检查完的那一刻）
    context_window: int = 4096
    token_rate: TokenRate = DEFAULT_RATE  # 估计 token 数用的比例（--local-model 时用自带模型的分词器量出来）
    stream: bool | None = None
    # 核对、修正、第二意见。rule：怎样判断有没有依据（score 支持分 / tutorial 原教程的重合度）；
    # threshold：那条规则的阈值（None：用它的默认值）
    rule: str = "score"
    threshold: float | None = None
    fix: bool = False
    fix_rounds: int = DEFAULT_FIX_ROUNDS
    judge: str | None = None
    judge_all: bool = False  # --judge-all：每一个带引用的句子都问（默认只问支持分拿不准的）
    judge_url: str = DEFAULT_OLLAMA_URL
    # 模型服务的密钥（ANS_API_KEY；评判模型在别的服务上时是 ANS_JUDGE_API_KEY）：只发给对应的模型服务
    model_key: str = ""
    judge_key: str = ""
    judge_key_name: str = "ANS_API_KEY"
    # 输出：html、summary 是检查过的输出文件（output_files.OutputFiles.plan）
    json: bool = False
    html: PlannedFile | None = None
    # --verify：几个进程、汇总存到哪里；progress：标准错误是终端时画进度条（main 决定）
    jobs: int = 1
    summary: PlannedFile | None = None
    quiet: bool = False  # -q：不画进度条
    # 任何输出里都要遮掉的密钥：环境里本程序认得的每一个（core.secrets.secrets_to_mask，发不发都遮）
    secrets: tuple[str, ...] = ()
    prog: str = "answer-with-sources"  # 提示里写的程序名（每个入口自己的名字）

    @property
    def support_rule(self) -> SupportRule:
        return SupportRule(self.rule, self.threshold)


def available_cores() -> int:
    """这个进程能用的核数（容器、taskset 限制过的也算对）。"""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
