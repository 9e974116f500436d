"""answer-with-sources 命令和 python -m sourced_answers 的入口：先装好 Ctrl-C 的处理，再导入主程序。"""
from typing import NoReturn

from sourced_answers.cli.launch import guard_startup, run


def main() -> NoReturn:
    guard_startup()
    from sourced_answers.cli.run import main as program
    run(program)
