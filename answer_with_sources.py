"""有出处的回答：秘塔搜索拿来源 → 读取前几条网页正文 → 本地模型写带 [编号] 引用的回答 → 程序核对引用。

  python answer_with_sources.py "家用 NAS 怎么选" --read 2
  python answer_with_sources.py --demo "家用 NAS 怎么选"     # 没有密钥：用内置的模拟秘塔
  python answer_with_sources.py --verify saved.json          # 只核对保存下来的回答

回答一个问题的经过（付费之前的检查 → 搜集资料 → 请模型回答 → 核对（修正、第二意见））写在
sourced_answers/api/answering.py 的 answer 里，命令行的 main 和输出在 sourced_answers/cli/run.py；这个文件是它的门：
python answer_with_sources.py 从这里进。每一层在 sourced_answers 的一个子包里（docs/development.md 有一张图）。
核对规则见 sourced_answers/checker/。退出码见 --help 的最后一段和 docs/reference.md 的退出码表（都由
sourced_answers/core/errors.py 的 EXIT_MEANINGS 生成）。
"""
import sourced_answers  # 只导入标准库的 _signal、os：启动期间的 Ctrl-C 由它接住

if __name__ == "__main__":  # 最先做：在导入本项目别的模块之前
    sourced_answers.catch_signals_while_starting()

from sourced_answers.cli.launch import run
from sourced_answers.cli.run import main

__all__ = ["check", "support", "main", "run_question", "answer_question", "verify_answer"]

if __name__ == "__main__":
    run(main)
else:
    # 被别的 Python 程序导入时才要的：check、support 是原教程的接口（教程的测试从这里导入），answer_question、
    # verify_answer 是给别的 Python 程序用的。作为命令运行时不导入它们：api/public.py 要回答问题的整条流程
    # （搜索、模型客户端），--help、--verify 用不上，启动要多花一倍的时间（docs/performance.md 的“启动”）
    from sourced_answers.api.public import answer_question, verify_answer
    from sourced_answers.checker import check, support
    from sourced_answers.cli.run import run_question
