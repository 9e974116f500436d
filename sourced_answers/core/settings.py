"""一次运行的设置，按阶段分开：搜索、模型、评判、核对，和运行本身。api/config.py 从参数（或 API 的关键字）和环境变量
建一次、检查一次，往下传；每一步只拿它读的那一份（Dask worker 核对一条记录只要 CheckSettings）。这里之下的代码
不读 os.environ。

每个默认值只写在这里（各个类的字段默认值）：参数解析、--help、库函数的默认参数和 docs/reference.md 都从这里取
（SEARCH_DEFAULTS、MODEL_DEFAULTS……）。用户能给的字段写成 option(…)（core/options.py）：它同时是命令行的一个参数和
Python API 的一个关键字，名字、类型、能取的值都只写在这一处（OPTIONS、KEYWORDS 是它们的清单）。"""
import os
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sourced_answers.checker import RULES, SupportRule
from sourced_answers.core.conversation import Turn
from sourced_answers.core.options import Option, OptionError, Range, check_relations, keywords_of, option
from sourced_answers.core.output_files import PlannedFile
from sourced_answers.core.retrying import Deadline

DEFAULT_OLLAMA_URL = "http://127.0.0.1:11434"
DEFAULT_MODEL = "qwen2.5:1.5b"
# 不请模型写的“模型”：从读到的网页里摘出和问题最相关的几句原话（--excerpts，聊天程序里选这个模型名）
EXCERPTS = "excerpts"
DEFAULT_METASO_BASE = "https://metaso.cn/api/v1"
# 密钥最长多少个字符（秘塔的、模型服务的都一样）：秘塔的密钥四十来个字符，网关发的 JWT 令牌也就一两千；HTTP 服务
# 一行请求头通常最多收 8 KB，更长的值发出去只会换来服务的英文报错（“431 Line too long”），所以发之前就拒绝
MAX_KEY_LENGTH = 4096
# 搜几条、读几个网页能取的范围（命令行、metaso_search.py、MCP 工具的参数都用它们）
SIZE_RANGE = (1, 100)
READ_RANGE = (0, 100)
# --demo-pages 的几组内置页面（search/demo_pages.py 的 PAGE_SETS 按这个顺序）
DEMO_PAGE_SETS = ("nas", "nas-en", "nas-long", "nas-injection")
# 装自带模型的开关：主命令的每个入口（answer-with-sources、python -m sourced_answers、python answer_with_sources.py、
# bash quickstart.sh）都认它，所以提示里写“用户刚才运行的那个命令 + 这个开关”，在哪种装法里都能用。
# 写在这里（而不是启动它的 model/llama_server.py）：每次解析参数都要它，不必为它导入启动服务的模块
INSTALL_FLAG = "--install-local-model"
# 自带的小模型常常一句话反复说到长度上限：--local-model 时回答默认最多这么多 token，一分钟内就能看到核对结果
BUNDLED_MAX_TOKENS = 300


# 模型名里不能有的：控制、格式字符（双向控制符、零宽字符）、U+2028、U+2029（会被当换行）、代理码位、私用区
NAME_PROBLEM_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})
MAX_NAME = 200


def model_name(value: str) -> str:
    """模型名（回答的、评判的；命令行、环境变量、请求里的都一样）：会出现在请求、说明和页面里，所以和别的输入一样
    检查——换行、控制字符、双向控制符、读不懂的字节都不行（一个换行就能在说明里伪造出一行“✓ 引用核对通过”）。
    返回去掉两头空白的名字；不行时抛 ValueError，说明接在“--model ”“model ”这样的名字后面。"""
    name = value.strip()
    if any(unicodedata.category(char) in NAME_PROBLEM_CATEGORIES for char in name):
        raise ValueError("的值里有换行、控制字符或读不懂的字节，请只写模型名（例如 qwen2.5:1.5b）")
    if len(name) > MAX_NAME:
        raise ValueError(f"的值太长（{len(name)} 个字符），模型名最多 {MAX_NAME} 个字符")
    if not name:
        raise ValueError("的值是空的")
    return name


@dataclass(frozen=True)
class ApiKey:
    """模型服务的密钥和它来自哪个环境变量（报错时点名；密钥本身从不出现在说明里）。没有密钥时 value 为空。
    run_secrets：这次运行的全部密钥——回答里出现的都在收到时就遮掉（长的先遮：两个密钥有重叠时不会露出半截）。"""
    value: str = ""
    name: str = "ANS_API_KEY"
    run_secrets: tuple[str, ...] = ()

    @property
    def masked(self) -> list[str]:
        return [self.value, *self.run_secrets]

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.value}"} if self.value else {}


NO_KEY = ApiKey()


@dataclass(frozen=True)
class TokenRate:
    """一个字大约算几个 token：汉字、其他字符各一个比例。默认是 Qwen、Llama 这类词表大的模型（汉字约一字一个，
    其他约四个字符一个，宁可估多）；自带的 SmolLM2 只会英文，一个汉字要两三个 token，启动它时用它自己的
    分词器量出来（local_serving）。"""
    han: float = 1.0
    other: float = 0.25


DEFAULT_RATE = TokenRate()


@dataclass(frozen=True)
class SourceBackend:
    """一个搜索后端的登记（search/backend.py 的 BACKENDS 由它们组成）：类在哪个模块里（用到时才导入），说给用户听的
    名字（“秘塔”：搜索{label}、{label}没有搜到结果）和一条结果的叫法（“网页”：读取前 2 个{unit}的正文）。
    选它的设置在声明上写 option(…, selects=这一条)：加一个后端不必再改选后端的代码。"""
    module: str
    cls: str
    label: str
    unit: str
    name: str = ""


# 没有哪个设置选别的后端时用它
METASO_BACKEND = SourceBackend("sourced_answers.search.metaso_backend", "MetasoBackend", "秘塔", "网页", "metaso")
DOCS_BACKEND = SourceBackend("sourced_answers.search.docs_backend", "DocsBackend", "本地文档", "段落", "docs")


@dataclass(frozen=True)
class SearchSettings:
    """搜集资料：从哪个搜索后端（search/backend.py 登记的名字；秘塔时可以是 --demo 的演示服务）、读几条、缓存。"""
    demo: bool = option(False)
    demo_pages: str | None = option(None, choices=DEMO_PAGE_SETS)  # None：按问题的语言选 nas 或 nas-en
    key: str = ""  # METASO_API_KEY（--demo、--verify 时是空的：不发）
    base: str = DEFAULT_METASO_BASE
    size: int = option(5, within=Range(*SIZE_RANGE), mcp="搜几条")
    read: int = option(2, within=Range(*READ_RANGE), at_most="size", mcp="读几个网页的正文")
    max_chars: int = option(2000, within=Range(1, 1_000_000))
    cache_dir: Path | None = None  # None：找不到可用的缓存目录，不用缓存
    no_cache: bool = option(False)
    refresh: bool = option(False)
    cache_search_hours: float = option(24.0, within=Range(0.0, 87600.0, float, "小时"))
    cache_page_days: float = option(7.0, within=Range(0.0, 3650.0, float, "天"))
    cache_max_mb: int = option(200, within=Range(1, 1_000_000))
    # --docs：从这些文件夹、文件里找资料（search/docs_backend.py），写法照用户给的（后端自己解析成绝对路径）
    docs: tuple[str, ...] = option((), selects=DOCS_BACKEND)
    # 本地文档的来源链接：file 是 file:// 的绝对地址加 #L12-18（命令行、--json、--html、--mcp、Python API），
    # relative 是“文件夹名/相对路径:12-18”、哪里都没有绝对路径（--serve：不给客户端看服务器上的路径）
    docs_links: str = "file"
    # 建本地文档索引时画进度条的地方（标准错误是终端、没有 -q 时由门给出，和 --eval 的一样）；None 不画
    progress: Any = field(default=None, compare=False, repr=False)

    @property
    def backend(self) -> str:
        """用哪个搜索后端（search/backend.py 的 BACKENDS 里登记的名字）：给了哪个写着 selects 的设置就是它选的，
        都没给时是秘塔。"""
        chosen = [item.selects.name for item in keywords_of(SearchSettings, "search")
                  if item.selects is not None and getattr(self, item.field)]
        return chosen[0] if chosen else METASO_BACKEND.name


@dataclass(frozen=True)
class ModelSettings:
    """回答（和 --fix 改写）的模型和它所在的 OpenAI 兼容服务。"""
    name: str = option(DEFAULT_MODEL, name="model", derived=True, serve=True,
                       check=model_name)  # 没给时取 ANS_MODEL
    url: str = DEFAULT_OLLAMA_URL  # --local-model 时是空的，直到本机模型服务启动（local_serving）
    key: ApiKey = NO_KEY  # ANS_API_KEY：只发给这个服务
    local: bool = option(False, name="local_model")
    max_tokens: int = option(1024, within=Range(1, 1_000_000), derived=True,
                             serve=True)  # --local-model 时更短
    # Ollama 在显存小于 24 GiB 的机器上默认 4096（旧版本是 2048），OpenAI 兼容接口不能按请求改
    context_window: int = option(4096, within=Range(256, 10_000_000))
    token_rate: TokenRate = DEFAULT_RATE  # 估计 token 数用的比例（--local-model 时用自带模型的分词器量出来）
    prompt_budget: int | None = None  # 回答的提示词最多多少 token（None：只受上下文窗口限制；--local-model 时有）
    # None：输出到终端时边生成边显示。只有命令行有：Python API 返回的是整个结果
    stream: bool | None = option(None, api=False)


# --judge-ask 的取值 → 说明：band 支持分拿不准的句子（和跨语言的）；risky 再加上支持分放过了、却有所引资料里
# 一字不差地找不到的数字、名称或否定说法的句子（checker/risky.py）；all 每一个带引用的句子（--judge-all）
JUDGE_ASK = {"band": "支持分拿不准的句子", "risky": "支持分拿不准的句子和有风险的句子", "all": "每一个带引用的句子"}


@dataclass(frozen=True)
class JudgeSettings:
    """--judge：第二意见的模型。name 为 None 时不请评判模型。提示词按回答模型的上下文窗口缩短。"""
    name: str | None = option(None, name="judge")
    url: str = option(DEFAULT_OLLAMA_URL, name="judge_url", derived=True)  # 没给时和回答的模型同一个服务
    key: ApiKey = NO_KEY  # 和回答模型同一个服务时是 ANS_API_KEY，别的服务是 ANS_JUDGE_API_KEY
    # --judge-ask：问哪些句子（JUDGE_ASK 的一个）。默认只问支持分拿不准的：多问有风险的句子没有实测的评判模型
    # 显出好处（docs/checker.md，bench/evaluate_judge_choice.py）。--judge-all 就是 --judge-ask all
    ask: str = option("band", name="judge_ask", choices=JUDGE_ASK, derived=True, switch=("judge_all", "all"))


@dataclass(frozen=True)
class CheckSettings:
    """核对和修正。rule：怎样判断有没有依据（score 支持分 / tutorial 原教程的重合度）；threshold：那条规则的阈值
    （None：用它的默认值）；fix_rounds：--fix 时最多请模型改写几轮。"""
    rule: str = option(RULES[0], choices=RULES)
    threshold: float | None = option(None, within=Range(0.0, 1.0, float))
    fix: bool = option(False)
    fix_rounds: int = option(1, within=Range(0, 10), derived=True)

    @property
    def support_rule(self) -> SupportRule:
        return SupportRule(self.rule, self.threshold)


@dataclass(frozen=True)
class ServeSettings:
    """--serve：OpenAI 兼容的 HTTP 服务。host 默认只听本机；不是本机的地址要有 key（ANS_SERVER_KEY），每个请求都要带它。
    concurrency：同时回答几个请求；queue：另外最多排几个，再多的马上回 503；max_body：请求体最多多少字节（413）。"""
    host: str = "127.0.0.1"
    port: int = 8000
    key: str = ""
    concurrency: int = 4
    queue: int = 16
    max_body: int = 16 * 1024 * 1024
    request_timeout: float = 300.0  # 没给 --timeout 时，每个请求最多这么多秒（504）
    # 收一个请求的请求头、请求体各最多这么多秒（--read-timeout）：慢吞吞的、只发半个请求的连接到时就关掉（408）
    read_timeout: float = 15.0
    # 带着 Origin 头的请求（网页里发出的）只接受这些来源（--allow-origin），回应带上 CORS 头；别的来源 403
    allowed_origins: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunSettings:
    """这次运行本身：做什么（回答 question、比较模型 eval、核对文件 verify）、输出到哪里、几个进程、总时限。"""
    question: str | None = None
    # 对话里的追问（--serve、--mcp）：搜索用的问题（None 就是 question）和之前的几轮（给回答的模型当上下文）
    query: str | None = None
    history: tuple[Turn, ...] = ()
    eval: str | None = None
    verify: str | None = None
    models: tuple[str, ...] = ()  # --eval 比较的模型（回答问题时只有 ModelSettings.name 一个）
    json: bool = option(False, api=False)
    html: PlannedFile | None = None  # 检查过的输出文件（output_files.OutputFiles.plan）
    summary: PlannedFile | None = None
    jobs: int = 1
    quiet: bool = option(False, api=False)  # -q：不画进度条
    timeout: float | None = option(None, within=Range(1.0, 86400.0, float, "秒"))
    started: float | None = None  # --timeout 从什么时候算起（time.monotonic()；参数检查完的那一刻）
    # 任何输出里都要遮掉的密钥：环境里本程序认得的每一个（core.secrets.secrets_to_mask，发不发都遮）
    secrets: tuple[str, ...] = ()
    prog: str = "answer-with-sources"  # 提示里写的程序名（每个入口自己的名字）
    serve: ServeSettings | None = None  # --serve：不回答一个问题，而是起 OpenAI 兼容的服务
    mcp: bool = option(False, api=False)  # --mcp：在标准输入输出上做 MCP 服务

    def deadline(self) -> Deadline:
        """整次运行的时限（--timeout，从参数检查完的那一刻算起）。"""
        return Deadline(self.timeout, self.started)


@dataclass(frozen=True)
class Settings:
    """一次运行的全部设置，由 api/config.build_settings 建一次；往下只传各步要的那一份。"""
    run: RunSettings = field(default_factory=RunSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    judge: JudgeSettings = field(default_factory=JudgeSettings)
    check: CheckSettings = field(default_factory=CheckSettings)


# 用户能给的每一个设置（命令行的参数、Python API 的关键字），按阶段
STAGES = {"run": RunSettings, "search": SearchSettings, "model": ModelSettings, "judge": JudgeSettings,
          "check": CheckSettings}
OPTIONS: list[Option] = [declared for stage, kind in STAGES.items() for declared in keywords_of(kind, stage)]
KEYWORDS: dict[str, Option] = {declared.name: declared for declared in OPTIONS}
# Python API 的关键字：answer_question 收每一个 api 的设置；核对一个保存下来的回答（verify_answer、verify_record）
# 只收核对的设置——fix_rounds 除外：它是请模型改写几轮，核对保存下来的回答不请模型
ANSWER_KEYWORDS = [declared for declared in OPTIONS if declared.api]
VERIFY_KEYWORDS = [declared for declared in ANSWER_KEYWORDS
                   if declared.stage == "check" and declared.name != "fix_rounds"]
# 每个请求也能改的设置：--serve 的请求体里同名的字段（serve=True）、--mcp 的 answer_question 工具的参数（mcp=…）
SERVE_OPTIONS = [declared for declared in OPTIONS if declared.serve]
MCP_OPTIONS = [declared for declared in OPTIONS if declared.mcp]

# 默认值（参数解析、帮助、库函数和文档从这里读）
SERVE_DEFAULTS = ServeSettings()
SEARCH_DEFAULTS = SearchSettings()
MODEL_DEFAULTS = ModelSettings()
CHECK_DEFAULTS = CheckSettings()
JUDGE_DEFAULTS = JudgeSettings()


def field_name(declared: Option) -> str:
    """请求里的字段名就是设置的名字（read、max_tokens）。"""
    return declared.name


def with_request(settings: Settings, given: Mapping[str, object], allowed: Iterable[Option],
                 named: Callable[[Option], str] = field_name) -> Settings:
    """一个请求（--serve 的请求体、--mcp 的工具参数）→ 这个请求的设置：服务启动时的 settings，换上请求给的设置。
    given：设置的名字 → 请求里的值（只看 allowed 里的：SERVE_OPTIONS 或 MCP_OPTIONS；None 是没给）。按声明检查
    类型、范围、能取的值（和命令行、Python API 同一份声明），再查设置之间的关系（read 不能大于 size，算上没换的）；
    不行时抛 OptionError，说明里的名字是 named(设置)：客户端写的那个字段。"""
    changed: dict[str, dict[str, Any]] = {}
    for declared in allowed:
        value = given.get(declared.name)
        if value is None:
            continue
        try:
            changed.setdefault(declared.stage, {})[declared.field] = declared.accept_json(value)
        except ValueError as problem:
            raise OptionError(f"{named(declared)} {problem}") from None
    settings = replace(settings, **{stage: replace(getattr(settings, stage), **fields)
                                    for stage, fields in changed.items()})
    check_relations({declared.name: getattr(getattr(settings, declared.stage), declared.field)
                     for declared in OPTIONS if not declared.sets}, OPTIONS, named)
    return settings


def available_cores() -> int:
    """这个进程能用的核数（容器、taskset 限制过的也算对）。"""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_max_tokens(bundled: bool) -> int:
    """--max-tokens 没给时：自带的小模型（bundled）常常一句话反复说到长度上限，限短一些；别的模型用通常的上限。"""
    return BUNDLED_MAX_TOKENS if bundled else MODEL_DEFAULTS.max_tokens
