"""主命令的参数：分组的中文帮助、--version。解析的约定（中文报错、范围检查）在 arguments.py。"""
import argparse

from sourced_answers.cli.arguments import (
    AddPath,
    ChineseArgumentParser,
    ChineseHelpFormatter,
    add_rule_flags,
    add_standard_flags,
    add_summary_flag,
    choices_of,
    in_range,
    range_of,
)
from sourced_answers.core.errors import EXIT_MEANINGS
from sourced_answers.core.questions import MAX_QUESTION
from sourced_answers.core.settings import (
    BUNDLED_MAX_TOKENS,
    CHECK_DEFAULTS,
    DEFAULT_MODEL,
    INSTALL_FLAG,
    JUDGE_DEFAULTS,
    MODEL_DEFAULTS,
    SEARCH_DEFAULTS,
    SERVE_DEFAULTS,
)

MODEL = MODEL_DEFAULTS
SEARCH = SEARCH_DEFAULTS
SERVE = SERVE_DEFAULTS
JUDGE = JUDGE_DEFAULTS

DEFAULT_PROG = "answer-with-sources"


def build_parser(prog: str = DEFAULT_PROG) -> ChineseArgumentParser:
    """主命令的参数。prog：用法和提示里的程序名（answer-with-sources、python answer_with_sources.py、
    python -m sourced_answers、bash quickstart.sh——每个入口传自己的名字）；解析结果的 args.prog 也是它。"""
    parser = ChineseArgumentParser(
        prog=prog, add_help=False, formatter_class=ChineseHelpFormatter,
        usage="%(prog)s \"问题\" [选项]\n       %(prog)s --verify FILE [选项]\n       %(prog)s --eval FILE [选项]",
        description="搜索秘塔、读取网页、让本地模型写带 [编号] 引用的回答，并由程序核对引用。",
        epilog="退出码：" + "；".join(f"{code.value} {meaning.brief}" for code, meaning in EXIT_MEANINGS.items())
               + "。参数的完整说明见 docs/reference.md，用法见 docs/usage.md。")
    parser.set_defaults(prog=prog)
    parser.add_argument("question", nargs="?", metavar="问题",
                        help=f"要问的问题（至少要有一个字，最多 {MAX_QUESTION} 个字符）")

    answering = parser.add_argument_group("回答问题")
    answering.add_argument("--size", type=range_of("size"), default=SEARCH.size, metavar="N",
                           help=f"搜索结果条数（默认 {SEARCH.size}）")
    answering.add_argument("--read", type=range_of("read"), default=SEARCH.read, metavar="N",
                           help="读取前几个网页的正文，不超过 --size；0 表示只用搜索摘要，不花读取的积分"
                                f"（默认 {SEARCH.read}）")
    answering.add_argument("--max-chars", type=range_of("max_chars"), default=SEARCH.max_chars, metavar="N",
                           help="每个网页放进提示词的最多字符数，从正文里挑和问题相关的段落"
                                f"（默认 {SEARCH.max_chars}）")
    answering.add_argument("--model", default=None, metavar="MODEL",
                           help=f"模型名（默认取 ANS_MODEL，再默认 {DEFAULT_MODEL}）")
    answering.add_argument("--excerpts", action="store_true",
                           help="不请模型写：从读到的网页里摘出和问题最相关的几句原话，带着编号 [n]，核对照常"
                                "（没有会写中文的模型时用它；同 --model excerpts）")
    answering.add_argument("--local-model", action="store_true",
                           help="不用 Ollama：程序在本机启动自带的 llama.cpp + SmolLM2-135M"
                                f"（很小、只会英文），用完关掉。先用同一个命令加 {INSTALL_FLAG} 装一次")
    answering.add_argument(INSTALL_FLAG, action="store_true",
                           help="装好 --local-model 要的 llama.cpp（xllamacpp）和 SmolLM2-135M 的模型文件（只需一次），"
                                "装进运行这个命令的 Python 环境（pipx 装的命令也一样），装完就结束")
    answering.add_argument("--max-tokens", type=range_of("max_tokens"), default=None, metavar="N",
                           help=f"回答最多多少 token，被截断时在标准错误里提醒（默认 {MODEL.max_tokens}；"
                                f"--local-model 时 {BUNDLED_MAX_TOKENS}）")
    answering.add_argument("--context-window", type=range_of("context_window"), default=MODEL.context_window,
                           metavar="N", help="模型的上下文窗口（token）：每个提示词（回答、修正、评判）放不下时"
                                             f"先缩短资料，还放不下就提醒（默认 {MODEL.context_window}）")
    answering.add_argument("--stream", action=argparse.BooleanOptionalAction, default=MODEL.stream,
                           help="边生成边显示回答（默认：输出到终端时开启，输出到管道或文件时关闭）")
    answering.add_argument("--demo", action="store_true", help="用内置的模拟秘塔服务，不需要密钥")
    answering.add_argument("--docs", action=AddPath, default=SEARCH.docs, metavar="PATH",
                           help="从本机的文档回答，代替秘塔搜索：一个文件夹或文件，可以给几次；Markdown、文本、HTML、"
                                "PDF、docx。不要密钥、不联网；索引建在缓存目录里，文件夹里的东西一样也不动")
    answering.add_argument("--demo-pages", choices=choices_of("demo_pages"), default=None, metavar="PAGES",
                           help="--demo 用哪组内置页面：nas（中文）、nas-en（英文）、nas-long（正文前有很长的导航）、"
                                "nas-injection（第 3 页写着“忽略之前的所有指令”）（默认按问题的语言选 nas 或 nas-en）")

    checking = parser.add_argument_group("核对保存下来的回答（--verify）和判断规则")
    checking.add_argument("--verify", metavar="FILE",
                          help="只核对保存下来的回答（JSON 或 JSON Lines，- 表示标准输入），不搜索也不调用模型")
    checking.add_argument("--jobs", type=in_range(1, 256), default=None, metavar="N",
                          help="--verify 用几个进程一起核对，输出顺序和 1 个进程时一样（默认：这台机器可用的核数）")
    add_summary_flag(checking, "--verify ")
    add_rule_flags(checking)

    repair = parser.add_argument_group("修正和第二意见")
    repair.add_argument("--fix", action="store_true",
                        help="修正没通过核对的回答：先只改引用标记（改引能支持句子的资料、补上缺的引用），"
                             "再请模型改写剩下被标出的句子（--verify 时只做前一步）")
    repair.add_argument("--fix-rounds", type=range_of("fix_rounds"), default=None, metavar="N",
                        help=f"--fix 时最多请模型改写几轮，0 表示只改引用标记（默认 {CHECK_DEFAULTS.fix_rounds}）")
    repair.add_argument("--judge", metavar="MODEL",
                        help="第二意见：请这个模型判断所引资料是否完全支持支持分拿不准的句子（和跨语言的句子），"
                             "它说“是”撤掉 weak_support，说“否”换成 judge_unsupported；支持分有把握的句子不问"
                             "（--judge-ask 改问哪些句子）。bespoke-minicheck 按它自己的格式问")
    repair.add_argument("--judge-ask", choices=choices_of("judge_ask"), default=None, metavar="WHICH",
                        help="--judge 问哪些句子：band 支持分拿不准的（和跨语言的）；risky 再加上支持分放过了、"
                             "却有所引资料里一字不差地找不到的数字、名称或否定说法（不、没有、无法、not……）的句子；"
                             "all 每一个带引用的句子（同 --judge-all）。实测的评判模型还没有显出 risky 的好处，"
                             f"见 docs/checker.md（默认 {JUDGE.ask}）")
    repair.add_argument("--judge-all", action="store_true",
                        help="--judge 问每一个带引用的句子，每一句都由评判模型决定（确定的规则照样；"
                             "同 --judge-ask all）")
    repair.add_argument("--judge-url", metavar="URL",
                        help="评判模型所在的 OpenAI 兼容服务（默认和回答用的模型同一个，即 OLLAMA_URL）")

    comparing = parser.add_argument_group("比较模型（--eval）")
    comparing.add_argument("--eval", metavar="FILE",
                           help="比较模型：FILE 每行一个问题（# 开头是注释），每个模型都把每个问题完整跑一遍，"
                                "最后打印一张表")
    comparing.add_argument("--models", metavar="A,B",
                           help="--eval 要比较的模型，逗号分隔（默认取 --model / ANS_MODEL）")

    serving = parser.add_argument_group(
        "在聊天窗口里用（服务）", "同样的搜索、回答和核对，给 Open WebUI、Chatbox、Cherry Studio 这类聊天程序"
                           "（OpenAI 兼容的接口），或者给 Claude Desktop、Cursor 这类 MCP 客户端用")
    serving.add_argument("--serve", metavar="[HOST:]PORT",
                         help="起 OpenAI 兼容的服务（/v1/chat/completions、/v1/models、/v1/verify），默认只听 "
                              f"{SERVE.host}；听别的地址要先设置 ANS_SERVER_KEY（例如 --serve 8000）。"
                              "回答里 annotations 的位置数的是 Unicode 码位："
                              "按 UTF-16 切的 JavaScript 客户端在表情之后要换算")
    serving.add_argument("--concurrency", type=in_range(1, 64), default=None, metavar="N",
                         help=f"--serve 同时回答几个请求（默认 {SERVE.concurrency}）")
    serving.add_argument("--queue", type=in_range(0, 1000), default=None, metavar="N",
                         help=f"--serve 另外最多排队几个请求，再多的马上回 503（默认 {SERVE.queue}）")
    serving.add_argument("--allow-origin", action="append", default=None, metavar="ORIGIN",
                         help="--serve 接受从这个网页来源（http://localhost:3000；桌面程序的 null，要先设置 "
                              "ANS_SERVER_KEY）发来的请求，回应带上 CORS 头，可以写几次；不写时带着 Origin 头的请求"
                              "一律 403")
    serving.add_argument("--read-timeout", type=in_range(1, 600), default=None, metavar="SECONDS",
                         help=f"--serve 收请求头、收请求体各最多等几秒，慢的连接到时就关掉"
                              f"（默认 {SERVE.read_timeout:g}）")
    serving.add_argument("--mcp", action="store_true",
                         help="在标准输入输出上做 MCP 服务：工具 answer_question 和 verify_answer")

    output = parser.add_argument_group("输出")
    output.add_argument("--json", action="store_true",
                        help="只在标准输出打印一个 JSON 对象（--verify 时每条一行；不流式），进度仍在标准错误")
    output.add_argument("--html", metavar="FILE",
                        help="另外写一个审阅页（自带样式、没有脚本的 HTML）：逐句标出通过和被标出的句子，"
                             "原因紧跟在那一句下面，点证据跳到资料里高亮的那一句")
    output.add_argument("-q", "--quiet", action="store_true",
                        help="不画进度条（默认：标准错误是终端时画，不管标准输出接到哪里）")

    cache = parser.add_argument_group(
        "网络和缓存", "秘塔的搜索结果和网页正文存在 $XDG_CACHE_HOME/answer-with-sources/"
                  "（默认 ~/.cache/answer-with-sources/），同样的搜索、同一个网页不再付费；--demo 不用缓存")
    cache.add_argument("--timeout", type=range_of("timeout"), default=None, metavar="SECONDS",
                       help="整次运行的总时限（秒），包括重试；每个请求仍有自己的超时（默认不限）")
    cache.add_argument("--no-cache", action="store_true", help="既不读也不写缓存")
    cache.add_argument("--refresh", action="store_true", help="不读缓存，重新向秘塔请求，并把新结果写进缓存")
    cache.add_argument("--cache-search-hours", type=range_of("cache_search_hours"),
                       default=SEARCH.cache_search_hours, metavar="HOURS",
                       help=f"搜索结果在缓存里有效多少小时（默认 {SEARCH.cache_search_hours:g}）")
    cache.add_argument("--cache-page-days", type=range_of("cache_page_days"), default=SEARCH.cache_page_days,
                       metavar="DAYS", help=f"网页正文在缓存里有效多少天（默认 {SEARCH.cache_page_days:g}）")
    cache.add_argument("--cache-max-mb", type=range_of("cache_max_mb"), default=SEARCH.cache_max_mb, metavar="MB",
                       help=f"缓存最多占多少 MB，超出时先删最旧的（默认 {SEARCH.cache_max_mb}）")

    add_standard_flags(parser.add_argument_group("其他"))
    return parser
