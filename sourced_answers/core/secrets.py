"""密钥（秘塔的、模型服务的）用之前先看像不像密钥；输出里要遮掉哪些（只在这里决定）。说明里从不出现密钥本身。"""
from collections.abc import Mapping

from sourced_answers.core.environment import ANS_API_KEY, ANS_JUDGE_API_KEY, ANS_SERVER_KEY, METASO_API_KEY, Variable
from sourced_answers.core.errors import ConfigError
from sourced_answers.core.settings import MAX_KEY_LENGTH

# 秘塔的密钥是 mk- 加三十多个字符；比这还短的值遮掉会误伤正常文字（遮掉每个“1”），所以直接拒绝
METASO_MIN_LENGTH = 16
# 模型服务的密钥由各家自己定（llama-server --api-key 可以随便写）：至少 8 个字符，短于此的遮不安全
MODEL_MIN_LENGTH = 8


def check_secret(key: str, name: str, minimum: int, how_to_fix: str) -> None:
    """可打印的 ASCII、中间没有空白、不短于 minimum、不长于 MAX_KEY_LENGTH。不对时抛 ConfigError，点名变量，
    不显示密钥。每个要发出密钥的地方在发之前调用它（config、metaso_search.api_key）。"""
    problem = None
    if len(key) > MAX_KEY_LENGTH:
        problem = (f"太长（{len(key)} 个字符，最多 {MAX_KEY_LENGTH} 个字符；是不是把整个文件或一段日志贴进来了？）")
    elif any(char.isspace() for char in key):
        problem = "中间有空格或换行（复制时多带了字符？）"
    elif not all(33 <= ord(char) < 127 for char in key):
        problem = "含有不是可打印 ASCII 的字符（全角字符、不可见字符或乱码）"
    elif len(key) < minimum:
        problem = f"太短（{len(key)} 个字符，至少要 {minimum} 个字符）"
    if problem:
        raise ConfigError(f"{name} 的格式不对：{problem}。{how_to_fix}")


def maskable(key: str, minimum: int) -> str:
    """输出里要遮掉的密钥：太短的值不遮（会误伤正常文字；真要用它时会被 check_secret 拒绝）。长短按看得见的字算：
    夹着的零宽字符之类不算数（遮的时候也不看它们）。没有密钥时不导入找密钥的 key_views（--help 不付它）。"""
    if not key:
        return ""
    from sourced_answers.core.key_views import visible
    return key if len(visible(key)) >= minimum else ""


# --serve 自己的密钥：别人拿它来调用这个服务，至少 16 个字符
SERVER_MIN_LENGTH = 16
# 本程序从环境里认得的每个密钥，和它最短要多长才拿来遮
KEY_VARIABLES: dict[Variable, int] = {METASO_API_KEY: METASO_MIN_LENGTH, ANS_API_KEY: MODEL_MIN_LENGTH,
                                      ANS_JUDGE_API_KEY: MODEL_MIN_LENGTH, ANS_SERVER_KEY: SERVER_MIN_LENGTH}


# 输出的格式自己会写在一段文字两头的字符（JSON 和 HTML 的引号、尖括号、& 和反斜杠、Markdown 的反引号）
DELIMITERS = "\"'`<>&\\"


def secrets_to_mask(environ: Mapping[str, str]) -> tuple[str, ...]:
    """任何输出（终端、日志、--json、审阅页、汇总、缓存、报错）里都要遮掉的密钥：环境里每一个本程序认得的密钥，
    不管这次运行发不发它——分享出去的页面里有一个密钥，比多遮掉一个词糟得多，而且每种输出都一样对待密钥。
    太短的值不遮（会误伤正常文字；真要用它时 check_secret 会拒绝它）。每个入口只调用这一个函数。
    密钥两头是引号这类字符时，去掉它们的那一段也遮：一段文字只截到密钥的引号之前（“资料里找不到的字”不带标点），
    编码成 JSON 时后面跟着的正是字符串的引号，读的人看到的就是整个密钥。"""
    keys: list[str] = []
    for variable, minimum in KEY_VARIABLES.items():
        key = maskable(environ.get(variable.name, "").strip(), minimum)
        keys += [key, maskable(key.strip(DELIMITERS), minimum)] if key else []
    return tuple(dict.fromkeys(key for key in keys if key))
