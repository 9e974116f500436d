"""退出码和错误：每一类错误带着自己的退出码，main() 只在一处把错误变成退出码。

  0 核对通过 · 1 有回答但没通过核对 · 2 用法、配置或输入错误 · 3 服务出错或没有可用结果 · 4 程序内部出错（bug）
  · 130 被中断（launch.py 里的最后一道防线给出 4 和导入期间的 130）
"""
from enum import IntEnum


class ExitCode(IntEnum):
    PASSED = 0
    FAILED = 1
    USAGE = 2
    SERVICE = 3
    INTERNAL = 4
    INTERRUPTED = 130


class AppError(Exception):
    """本程序报给用户的错误：str(error) 是给人看的中文说明，exit_code 是退出码。"""
    exit_code = ExitCode.SERVICE


class UsageError(AppError):
    """用户给的参数、配置或输入文件有问题（退出码 2）。"""
    exit_code = ExitCode.USAGE


class ConfigError(UsageError):
    """环境变量或参数里的地址、密钥之类写错了（退出码 2）。"""


class InputError(UsageError):
    """--verify 的输入文件读不了或格式不对（退出码 2）。"""


class ServiceError(AppError):
    """外部服务（秘塔、模型服务）出错或没有给出可用的结果（退出码 3）。"""
    exit_code = ExitCode.SERVICE
