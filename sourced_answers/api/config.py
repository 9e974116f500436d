"""一次运行的全部设置：环境变量和命令行参数（或 Python API 的关键字）在这里读一次、检查一次，变成按阶段分开的
Settings 往下传。命令行（build_settings）和 Python API（api/public.py）都走 settings_from：声明过的设置由
core.options.fill 原样放进字段，这里只写参数之间的冲突和由别的值、环境变量算出来的（地址、密钥、要写的文件）。
这里之下的代码不读 os.environ；quickstart、基准和测试要换设置时，直接构造 Settings 或传入另一份环境变量。
用户写错的（参数互相冲突、地址不对、缺密钥）都是 UsageError / ConfigError（退出码 2），在付费之前报出。"""
import argparse
import ipaddress
import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlsplit

from sourced_answers.api.origins import allowed_origins
from sourced_answers.core.environment import (
    ANS_API_KEY,
    ANS_JUDGE_API_KEY,
    ANS_MODEL,
    ANS_SERVER_KEY,
    METASO_BASE,
    OLLAMA_URL,
    cache_directory,
)
from sourced_answers.core.errors import ConfigError, UsageError
from sourced_answers.core.options import Option, check_relations, fill, nul_problem, paths
from sourced_answers.core.output_files import OutputFiles
from sourced_answers.core.questions import clean_question
from sourced_answers.core.secrets import MODEL_MIN_LENGTH, SERVER_MIN_LENGTH, check_secret, secrets_to_mask
from sourced_answers.core.settings import (
    DEFAULT_METASO_BASE,
    DEFAULT_MODEL,
    DEFAULT_OLLAMA_URL,
    EXCERPTS,
    OPTIONS,
    SERVE_DEFAULTS,
    ApiKey,
    CheckSettings,
    JudgeSettings,
    ModelSettings,
    RunSettings,
    SearchSettings,
    ServeSettings,
    Settings,
    available_cores,
    default_max_tokens,
    model_name,
)
from sourced_answers.core.strings import literal
from sourced_answers.model.endpoints import api_base
from sourced_answers.model.preflight import ollama_name

NETLOC = re.compile(r"(?:\[(?P<ipv6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9.-]+))(?::(?P<port>[0-9]{1,5}))?")
LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


class Given(SimpleNamespace):
    """用户给的值，按参数名（read、judge_url、verify……）：命令行解析出来的，或者 Python API 的关键字（已经检查过，
    没给的关键字是它的 unset）。API 没有的名字（verify、html、serve……）读出来是 None：没给。"""

    def __getattr__(self, name: str) -> Any:
        return None


# 用户常把接口的完整地址贴进来：秘塔的 /search。去掉这些，只留服务的根（模型服务的地址由 endpoints.api_base 整理）
METASO_URL_SUFFIXES = ("/search", "/reader")
UNPRINTABLE = re.compile(r"[\x00-\x20\x7f-\x9f\ud800-\udfff]")


def host_problem(netloc: str) -> str | None:
    """地址里“主机:端口”这一段的问题（没有问题时为 None）：主机名每段是字母数字和连字符，
    IPv6 要放在方括号里，端口是 1 到 65535。"""
    if "@" in netloc:
        return "地址里不要写用户名和密码"
    match = NETLOC.fullmatch(netloc)
    if not match:
        return "主机名或端口无效"
    if match.group("ipv6") is not None:
        try:
            ipaddress.IPv6Address(match.group("ipv6"))
        except ValueError:
            return "IPv6 地址无效"
    elif not all(LABEL.fullmatch(label) for label in match.group("host").split(".")):
        return "主机名无效"
    port = match.group("port")
    if port is not None and not 1 <= int(port) <= 65535:
        return "端口无效"
    return None


def normalize_url(value: str, name: str, suffixes: tuple[str, ...] = ()) -> str:
    """检查一个服务地址，返回规范的写法；name 是环境变量或参数的名字，出错时写进说明（值里不会有密钥）。
    地址末尾是 suffixes 里的某一段时去掉它（只去一次）。"""
    text = value.strip()
    if "://" not in text:
        text = "http://" + text  # host:port
    problem = None
    try:
        parts = urlsplit(text)
        if UNPRINTABLE.search(text):
            problem = "地址里有空格、换行或不可见字符"
        elif parts.scheme.lower() not in ("http", "https"):
            problem = f"只支持 http 和 https，不支持 {parts.scheme}"
        elif parts.query or parts.fragment or text.endswith(("?", "#")):
            problem = "服务地址里不要带 ? 或 # 后面的部分（程序会在地址后面接上接口的路径）"
        else:
            problem = host_problem(parts.netloc)
    except ValueError:  # IPv6 的方括号没配对之类
        problem = "主机名或端口无效"
    if problem:
        shown = literal(re.sub(r"//[^/@]*@", "//***@", value))  # 地址里的用户名和密码不显示
        raise ConfigError(f"{name} 的值“{shown}”不是有效的服务地址：{problem}（例如 http://127.0.0.1:11434）")
    text = text.rstrip("/")
    for suffix in suffixes:
        if text.lower().endswith(suffix):
            return text[:-len(suffix)].rstrip("/")
    return text


def flag_of(declared: Option) -> str:
    """命令行和 Python API 的说明里，一个设置写成它的参数（--read）。"""
    return declared.flag


def check_flags(args: Given) -> None:
    """参数之间的冲突（和顺序有关：先报最先发现的一个）。"""
    for flag, value in (("--model", args.model), ("--models", args.models), ("--eval", args.eval),
                        ("--verify", args.verify), ("--html", args.html), ("--judge", args.judge),
                        ("--judge-url", args.judge_url), ("--summary", args.summary)):
        if value is not None and not value.strip():
            raise UsageError(f"{flag} 的值是空的")
    for flag, value in (("--verify", args.verify), ("--eval", args.eval), ("--html", args.html),
                        ("--summary", args.summary)):
        problem = nul_problem(value) if value is not None else None
        if problem:
            raise UsageError(f"{flag} 的{problem}")
    if args.docs:  # 和 Python API 的 docs= 同一道检查：空的路径（--docs "$NOTES" 而变量没设）不当成当前目录
        try:
            paths(args.docs)
        except ValueError as problem:
            raise UsageError(f"参数 --docs：{problem}") from None
    check_relations(vars(args), OPTIONS, flag_of)
    if args.models and not args.eval:
        raise UsageError("--models 要和 --eval 一起用")
    if getattr(args, "excerpts", False) and (args.local_model or args.model):  # 只有命令行有 --excerpts
        raise UsageError(f"--excerpts 不请模型写（就是 --model {EXCERPTS}），不要再加 --local-model、--model")
    if args.local_model and not names_only_the_bundled_model(args):
        raise UsageError(f"--local-model 只有自带的 SmolLM2-135M（{bundled_model_name()}）一个模型，不能同时问"
                         "别的模型：不要再给别的 --model 或 --models（比较它时写 --eval 问题文件 --local-model）")
    if args.docs and (args.demo or args.verify):  # 资料只从一处来；--verify 不搜索
        raise UsageError(f"--docs 从本机的文档回答，不要同时给 {'--demo' if args.demo else '--verify'}")
    if args.demo_pages and not args.demo:  # 不然它什么也不选，程序照样去搜真的秘塔（付费）
        raise UsageError("--demo-pages 要和 --demo 一起用")
    if args.judge_url and not args.judge:
        raise UsageError("--judge-url 要和 --judge 一起用")
    if args.judge_all and not args.judge:
        raise UsageError("--judge-all 要和 --judge 一起用")
    if args.judge_ask and not args.judge:
        raise UsageError("--judge-ask 要和 --judge 一起用")
    if args.judge_all and args.judge_ask not in (None, "all"):
        raise UsageError(f"--judge-all 就是 --judge-ask all，不要同时给 --judge-ask {args.judge_ask}")
    if args.html and args.eval:
        raise UsageError("--html 用于回答问题和 --verify，--eval 请用 --json 保存结果")
    if args.no_cache and args.refresh:
        raise UsageError("--no-cache 和 --refresh 不能同时用：--refresh 会把新结果写进缓存")
    if args.fix_rounds is not None and not args.fix:
        raise UsageError("--fix-rounds 要和 --fix 一起用")
    if (args.jobs is not None or args.summary) and not args.verify:
        raise UsageError("--jobs 和 --summary 用于 --verify")
    if args.serve is not None or args.mcp:
        check_serving_flags(args)
        return
    refuse_serve_only(args)
    if args.verify:
        if args.question or args.eval:
            raise UsageError("--verify 只核对文件，不要同时给出问题或 --eval")
        return
    if args.eval:
        if args.question:
            raise UsageError("--eval 从文件读问题，不要同时给出问题")
        return
    if args.question is None or not args.question.strip():
        raise UsageError(f"请给出要问的问题，例如：{args.prog} \"家用 NAS 怎么选\"")


def clean_name(value: str, where: str) -> str:
    """模型名（回答的、评判的）：和请求里的模型名同一个检查（core.settings.model_name），说明里写 where。"""
    try:
        return model_name(value)
    except ValueError as problem:
        raise UsageError(f"{where}{problem}") from None


def same_model(name: str) -> str:
    """两个名字指的是不是同一个模型：按 Ollama 的规则（没写标签就是 :latest），不分大小写。"""
    return ollama_name(unicodedata.normalize("NFKC", name)).casefold()


def bundled_model_name() -> str:
    """自带模型在请求里的名字。只有 --local-model 时才问：那时才导入启动它的模块（model/llama_server.py）。"""
    from sourced_answers.model import llama_server
    return llama_server.MODEL_NAME


def names_only_the_bundled_model(args: Given) -> bool:
    """--model、--models 没给，或者给的就是自带的模型（--eval … --local-model --models smollm2-135m）。"""
    named = [args.model] if args.model else []
    named += eval_models(args.models) if args.models else []
    return all(same_model(name) == same_model(bundled_model_name()) for name in named)


def eval_models(value: str) -> tuple[str, ...]:
    """--models 的逗号分隔的模型名。同一个模型写了两次（包括 qwen2.5 和 qwen2.5:latest、大小写不同）是用法错误：
    每个问题会请它回答两次、表里出现两行一样的——不悄悄合并，说出是哪两个。"""
    models = [clean_name(m, "--models 里的模型名") for m in value.split(",") if m.strip()]
    if not models:
        raise UsageError("--models 里没有模型名")
    seen: dict[str, str] = {}
    for name in models:
        first = seen.get(same_model(name))
        seen.setdefault(same_model(name), name)
        if first is not None:
            twice = f"写了两次 {name}" if first == name else f"的 {first} 和 {name} 是同一个模型"
            raise UsageError(f"--models 里{twice}（Ollama 里没写标签就是 :latest，名字不分大小写）："
                             "每个模型只写一次，不然每个问题都要请它回答两次")
    return tuple(models)


def model_key_from(environ: Mapping[str, str], name: str = ANS_API_KEY.name) -> str:
    """模型服务的密钥（没设置时是空字符串：Ollama、本机的 llama.cpp 不要密钥）。OPENAI_API_KEY 故意不读：
    它多半是给 OpenAI 的，不能悄悄发给 OLLAMA_URL 指向的别的服务。"""
    key = environ.get(name, "").strip()
    if key:
        check_secret(key, name, MODEL_MIN_LENGTH, f"请检查 {name}（模型服务的 API Key）")
    return key


def model_service_url(value: str, name: str) -> str:
    """模型服务的地址（OLLAMA_URL、--judge-url）只在这里整理一次：先检查是不是有效的地址，再变成接口前缀
    （endpoints.api_base：末尾的 /api、/v1、/v1/chat、/v1/chat/completions 都认得）。预检和每一次对话都用这个结果。"""
    return api_base(normalize_url(value, name))


def model_url_from(environ: Mapping[str, str]) -> str:
    """OLLAMA_URL（“localhost:11434”就是 http://localhost:11434）整理成接口前缀；没设置时是本机 Ollama 的默认地址。"""
    value = environ.get(OLLAMA_URL.name, "").strip()
    return model_service_url(value or DEFAULT_OLLAMA_URL, OLLAMA_URL.name)


def model_from(environ: Mapping[str, str], flag: str | None = None) -> str:
    """--model，再是 ANS_MODEL，再是默认模型。"""
    if (flag or "").strip():
        return clean_name(flag or "", "--model ")
    if environ.get(ANS_MODEL.name, "").strip():
        return clean_name(environ[ANS_MODEL.name], f"{ANS_MODEL.name} ")
    return DEFAULT_MODEL


def check_serving_flags(args: Given) -> None:
    """--serve、--mcp：每个请求带着自己的问题，命令行上不给问题，也不和 --verify、--eval、输出文件一起用。"""
    door = "--serve" if args.serve is not None else "--mcp"
    if args.serve is not None and args.mcp:
        raise UsageError("--serve 和 --mcp 一次只能用一个")
    if args.question or args.verify or args.eval:
        raise UsageError(f"{door} 起一个服务，问题由每个请求带来：不要同时给出问题、--verify 或 --eval")
    for flag, value in (("--html", args.html), ("--json", args.json), ("--summary", args.summary),
                        ("--jobs", args.jobs)):
        if value:
            raise UsageError(f"{door} 的结果在每个请求的回应里：不要同时用 {flag}")
    if args.mcp:
        refuse_serve_only(args)


def refuse_serve_only(args: Given) -> None:
    """只有 --serve 用得上的参数，用在别处是用法错误。"""
    if args.concurrency is not None or args.queue is not None:
        raise UsageError("--concurrency 和 --queue 用于 --serve")
    if args.allow_origin is not None or args.read_timeout is not None:
        raise UsageError("--allow-origin 和 --read-timeout 用于 --serve")


SERVE_SPEC = re.compile(r"(?:(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):)?(?P<port>[0-9]{1,5})")
LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def serve_settings(args: Given, environ: Mapping[str, str]) -> ServeSettings | None:
    """--serve [HOST:]PORT → ServeSettings。听本机以外的地址必须有 ANS_SERVER_KEY（格式和别的密钥一样检查）。"""
    if args.serve is None:
        return None
    found = SERVE_SPEC.fullmatch(args.serve.strip())
    if not found or not 0 <= int(found["port"]) <= 65535:
        raise UsageError(f"--serve 的值“{literal(args.serve)}”看不懂：要写成 端口（8000）或 地址:端口"
                         f"（127.0.0.1:8000、0.0.0.0:8000、[::1]:8000），端口 0–65535（0 表示随便挑一个空闲的）")
    host = (found["host"] or SERVE_DEFAULTS.host).strip("[]")
    key = environ.get(ANS_SERVER_KEY.name, "").strip()
    if key:
        check_secret(key, ANS_SERVER_KEY.name, SERVER_MIN_LENGTH, "请换一个至少 16 个字符、不含空白的值")
    elif host not in LOOPBACK_HOSTS:
        raise UsageError(f"--serve 要听 {literal(host)}（本机以外也连得上）：请先设置 ANS_SERVER_KEY，"
                         "每个请求都要带 Authorization: Bearer 这个值（只听本机时可以不设）")
    return ServeSettings(host=host, port=int(found["port"]), key=key,
                         concurrency=args.concurrency or SERVE_DEFAULTS.concurrency,
                         queue=SERVE_DEFAULTS.queue if args.queue is None else args.queue,
                         read_timeout=float(args.read_timeout or SERVE_DEFAULTS.read_timeout),
                         allowed_origins=allowed_origins(args.allow_origin, key))


def build_settings(args: argparse.Namespace, environ: Mapping[str, str],
                   streams: Sequence[int] = (0, 1, 2)) -> Settings:
    """命令行参数（已由 cli.build_parser 解析、检查过范围）加上环境变量 → Settings。
    streams：这次运行的标准输入、输出、错误的文件描述符（要写的文件不能是它们）。"""
    return settings_from(vars(args), environ, streams)


def settings_from(values: Mapping[str, Any], environ: Mapping[str, str],
                  streams: Sequence[int] = (0, 1, 2)) -> Settings:
    """用户给的值（参数名 → 值：命令行的，或 Python API 的关键字）加上环境变量 → Settings。命令行和 Python API
    都走这里：声明过的设置（core/settings.py 的 option）由 fill 原样放进字段，这里只算由别的设置、环境变量决定的。"""
    args = Given(**values)
    check_flags(args)
    serving = args.serve is not None or args.mcp
    question = clean_question(args.question) if not (args.verify or args.eval or serving) else None
    serve = serve_settings(args, environ)
    model = EXCERPTS if getattr(args, "excerpts", False) else \
        bundled_model_name() if args.local_model else model_from(environ, args.model)
    if args.eval and not args.local_model:
        models = eval_models(args.models or model)
    else:
        models = (model,)
    model_url, judge_url = service_urls(args, environ)
    # 只读这次运行真的会发出去的密钥：没发的不要求（遮是另一回事：环境里的每一个都遮）
    sends = keys_sent(args, model_url, judge_url)
    metaso_base = DEFAULT_METASO_BASE
    if sends.metaso:  # 要搜索真的秘塔：这时才导入它的客户端（--verify、--demo、--docs 用不上）
        from sourced_answers.search import metaso_client
        metaso_base = normalize_url(metaso_client.api_base(environ), METASO_BASE.name, METASO_URL_SUFFIXES)
    judge = clean_name(args.judge, "--judge ") if args.judge else None
    secrets = secrets_to_mask(environ)
    model_key = ApiKey(model_key_from(environ) if sends.model else "", ANS_API_KEY.name, secrets)
    judge_key = model_key if judge_url == model_url else ApiKey("", ANS_JUDGE_API_KEY.name, secrets)
    if sends.judge:  # 别的服务：只用它自己的密钥，回答模型的密钥不发给它
        judge_key = ApiKey(model_key_from(environ, ANS_JUDGE_API_KEY.name), ANS_JUDGE_API_KEY.name, secrets)
    key = metaso_client.api_key(environ) if sends.metaso else ""
    # 要写的文件在这里一起检查（付费、打印任何东西之前）：不能是输入、标准输入输出，也不能两个写到同一个文件
    outputs = OutputFiles([path for path in (args.verify, args.eval) if path], streams)
    html = outputs.plan(args.html, "审阅页") if args.html else None
    summary = outputs.plan(args.summary, "汇总") if args.summary else None
    return Settings(
        run=fill(RunSettings, values, question=question, eval=args.eval, verify=args.verify, models=models,
                 html=html, summary=summary, jobs=args.jobs or available_cores(), started=time.monotonic(),
                 secrets=secrets, prog=args.prog or RunSettings.prog, serve=serve),
        search=fill(SearchSettings, values, key=key, base=metaso_base, cache_dir=cache_directory(environ),
                    docs_links="relative" if args.serve is not None else "file"),
        model=fill(ModelSettings, values, name=model, url=model_url, key=model_key,
                   max_tokens=args.max_tokens or default_max_tokens(args.local_model)),
        judge=fill(JudgeSettings, values, name=judge, url=judge_url,
                   key=judge_key if judge else ApiKey(run_secrets=secrets)),
        check=fill(CheckSettings, values))


@dataclass(frozen=True)
class KeysSent:
    """这次运行会发出去哪几个密钥：秘塔的、回答模型的（ANS_API_KEY）、另一个评判服务的（ANS_JUDGE_API_KEY）。"""
    metaso: bool
    model: bool
    judge: bool


def service_urls(args: Given, environ: Mapping[str, str]) -> tuple[str, str]:
    """(回答模型的地址, 评判模型的地址)。--verify 不加 --judge 时不找模型服务，OLLAMA_URL 不读；
    --local-model 时也不读，地址是空的，等本机模型服务启动后才知道（没给 --judge-url 的评判模型也用它）。"""
    if args.local_model:
        model_url = ""
    else:
        model_url = model_url_from(environ) if not args.verify or args.judge else api_base(DEFAULT_OLLAMA_URL)
    judge_url = model_service_url(args.judge_url, "--judge-url") if args.judge_url else model_url
    return model_url, judge_url


def keys_sent(args: Given, model_url: str, judge_url: str) -> KeysSent:
    """哪几个密钥会发出去——build_settings 只读、只检查这几个（遮的是环境里的每一个：secrets_to_mask）。"""
    judge = bool((args.judge or "").strip())
    return KeysSent(metaso=not args.verify and not args.demo and not args.docs,
                    model=not args.local_model and (not args.verify or (judge and judge_url == model_url)),
                    judge=judge and judge_url != model_url)
