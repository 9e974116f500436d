"""退出码和错误：每一类错误带着自己的退出码，main() 只在一处把错误变成退出码。

每个退出码的意思写在 EXIT_MEANINGS 里（只写这一处）：--help 末尾的一句和 docs/reference.md 的退出码表都由它生成。
launch.py 里的最后一道防线给出 4 和 main 之外的 130（导入期间的 130 由包的根 sourced_answers
里接住启动期间信号的那个函数给出）。
"""
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar


class ExitCode(IntEnum):
    PASSED = 0
    FAILED = 1
    USAGE = 2
    SERVICE = 3
    INTERNAL = 4
    INTERRUPTED = 130


@dataclass(frozen=True)
class ExitMeaning:
    """一个退出码的意思：brief 是 --help 末尾的短说法，detail 是参考文档里的完整说明（Markdown）。"""
    brief: str
    detail: str


EXIT_MEANINGS = {
    ExitCode.PASSED: ExitMeaning("核对通过", "有回答，核对全部通过"),
    ExitCode.FAILED: ExitMeaning("有回答但没通过核对", "有回答，但没通过核对（请人工核对）"),
    ExitCode.USAGE: ExitMeaning(
        "用法、配置或输入错误",
        "用法、配置或输入有误：参数不对、没设 `METASO_API_KEY` 或格式不对、地址写错（包括 `OLLAMA_URL` 指向的不是 "
        "OpenAI 兼容的服务）、模型名里有换行或控制字符、`--verify` 的文件格式不对、`--html` / `--summary` "
        "的路径不能用或写不进去、标准输出写不进去（磁盘满）、`--serve` 的端口被占用或地址不能用"),
    ExitCode.SERVICE: ExitMeaning(
        "服务出错或没有可用结果",
        "服务出错或没有可用结果：秘塔报错、没搜到结果、模型服务连不上或报错、模型没有给出回答（回答为空，"
        "或者停在没有结束的思考里：写下的文字照样标明了输出）；`--judge` "
        "的评判模型出错（回答照样输出）；`--jobs` 的一个工作进程被系统结束"),
    ExitCode.INTERNAL: ExitMeaning(
        "程序内部出错（请报告，加 --debug 看报错堆栈）",
        "程序自己的错误（bug）：只打印一行中文说明和反馈的办法，加 `--debug` 再运行一次可以看到报错堆栈，请附在反馈里"),
    ExitCode.INTERRUPTED: ExitMeaning(
        "被中断（Ctrl-C、SIGTERM、SIGHUP，或者标准输出被对方关掉）",
        "被打断：按了 Ctrl-C、收到 SIGTERM（`kill`、`timeout`）或 SIGHUP（终端关了、ssh 断了），"
        "或者标准输出被对方关掉了（比如接在 `head` 后面）"),
}


class AppError(Exception):
    """本程序报给用户的错误：str(error) 是给人看的中文说明，exit_code 是退出码。"""
    exit_code = ExitCode.SERVICE


class UsageError(AppError):
    """用户给的参数、配置或输入文件有问题（退出码 2）。"""
    exit_code = ExitCode.USAGE


class QuestionError(UsageError):
    """问题本身不能问：不是有效的文字、没有任何字、太长（退出码 2）。code 是 --serve 回的错误码。"""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class ConfigError(UsageError):
    """环境变量或参数里的地址、密钥之类写错了（退出码 2）。"""


class InputError(UsageError):
    """--verify 的输入文件读不了或格式不对（退出码 2）。"""


class ServiceError(AppError):
    """外部服务（秘塔、模型服务）出错或没有给出可用的结果（退出码 3）。timed_out：是总时限（--timeout）用完了
    （--serve 的服务按它回 504，别的出错回 502）。"""
    exit_code = ExitCode.SERVICE
    timed_out = False


class DocsError(UsageError):
    """--docs 用不了（退出码 2）：给的路径里一个能读的文档也没有，或者这个 Python 的 SQLite 没有 FTS5。"""


class OutputClosed(AppError):
    """标准输出被关掉了（比如接在 head 后面、head 已经退出）：像 Unix 工具一样安静地结束（退出码 130）。"""
    exit_code = ExitCode.INTERRUPTED


class OutputFailed(UsageError):
    """标准输出写不进去（磁盘满之类，退出码 2）。"""


class OutputFileError(UsageError):
    """要写的文件不能用、或者写不出来（退出码 2；已经打印的回答不受影响）。"""


class MissingKeyError(ConfigError):
    """没有设置 METASO_API_KEY：这是配置问题，不是服务故障（退出码 2）。"""

    def __init__(self) -> None:
        super().__init__("没有设置 METASO_API_KEY。请在秘塔开放平台申请 API Key，"
                         "然后运行 export METASO_API_KEY=mk-你的密钥（只放在环境变量里，不要写进代码）；"
                         "没有密钥也可以加 --demo 用内置的模拟服务试用")


class DeadlineExceeded(Exception):
    """总时限（--timeout）用完了。"""


ServiceErrorT = TypeVar("ServiceErrorT", bound="ServiceError")


def out_of_time(error: ServiceErrorT) -> ServiceErrorT:
    """标明这个服务错误是总时限用完了（DeadlineExceeded 变成秘塔、模型的错误时用）。"""
    error.timed_out = True
    return error


class SourceError(ServiceError):
    """搜集资料失败（退出码 3）：每个搜索后端的错误都是它的子类，上面的步骤只认它。code 是服务的错误码（没有则为
    None），status 是 HTTP 状态码（不是 HTTP 的后端为 None），next_step 是接下来该怎么做。"""

    def __init__(self, message: str, code: int | str | None = None, status: int | None = None,
                 next_step: str | None = None, transient: bool = False) -> None:
        self.message = message
        self.code = code
        self.status = status
        self.next_step = next_step
        self.transient = transient  # True：网络抖动、限流、服务器临时出错，可以重试
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.next_step:
            return f"{self.message}。{self.next_step}"
        return self.message


class MetasoError(SourceError):
    """秘塔接口失败（退出码 3）。"""


class NoResults(SourceError):
    """搜索后端对这个问题一条结果也没有（退出码 3）。--eval 把它记在这个问题上，其余的问题照跑。"""


class ModelError(ServiceError):
    """模型服务出错或没有给出可用的回答（退出码 3）。partial 是出错前已经收到的回答。"""

    def __init__(self, message: str, partial: str = "", transient: bool = False) -> None:
        super().__init__(message)
        self.partial = partial
        self.transient = transient  # True：连不上、限流、服务器临时出错，可以重试


class ModelUnreachable(ModelError):
    """连不上模型服务：之后的请求也不会成功。"""


class ModelNotFound(ModelError):
    """模型服务在，可是没有这个模型（付费之前的检查发现的；--serve 回 404）。"""


class LocalModelError(ServiceError):
    """本地模型服务装不上或起不来（退出码 3）。"""


class WorkerDied(ServiceError):
    """工作进程意外结束了（退出码 3）。"""


class SchedulerLost(ServiceError):
    """和 Dask 调度器的连接断了（退出码 3）。"""


class ChildSettingsError(UsageError):
    """自带模型服务的子进程（model/local_child.py）从标准输入收到的设置不对（退出码 2）。"""


# 每个入口的 main 接住的三种结束：-h / --version（SystemExit）、本程序报给用户的错误、Ctrl-C
ENDINGS = (SystemExit, AppError, KeyboardInterrupt)


def exit_code_of(ending: BaseException, say: Callable[[str], None]) -> int:
    """main 接住的一种结束（ENDINGS）→ 退出码，并用 say 说一句（每个入口都只用这一个函数）：
    帮助、版本号已经打印（0）；本程序的错误说它的中文说明、用它的退出码；Ctrl-C 说“已中断”（130）。"""
    if isinstance(ending, SystemExit):
        code = ending.code
        return int(code or 0) if isinstance(code, int | None) else ExitCode.USAGE
    if isinstance(ending, KeyboardInterrupt):
        say("\n已中断")
        return ExitCode.INTERRUPTED
    if isinstance(ending, AppError):
        if str(ending):
            # 一条说明一定只占一行：说明里夹着的路径、文件名、服务的原话哪怕有换行，也伪造不出一行“✓ 引用核对通过”
            # （每处引用用户的字符串时本该已经用 literal 写好；这里兜底）。到这里程序早已导入了 core.strings，
            # 所以在函数里导入：这个模块本身只用标准库，入口导入它几乎不花时间
            from sourced_answers.core.strings import literal
            say(f"✗ {literal(ending, limit=None)}")
        return ending.exit_code
    raise ending
