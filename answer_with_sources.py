"""有出处的回答：秘塔搜索拿来源 → 读取前几条网页正文 → 本地模型写带 [编号] 引用的回答 → 程序核对引用。

  python answer_with_sources.py "家用 NAS 怎么选" --read 2
  python answer_with_sources.py --demo "家用 NAS 怎么选"     # 没有密钥：用内置的模拟秘塔
  python answer_with_sources.py --verify saved.json          # 只核对保存下来的回答

一次运行的经过（配置 → 搜集资料 → 请模型回答 → 核对（修正、第二意见）→ 输出）写在 sourced_answers/cli/run.py 的
run_question 里；这个文件是它的门：python answer_with_sources.py 从这里进。每一层在 sourced_answers 的一个子包里
（docs/development.md 有一张图）。核对规则见 sourced_answers/checker/。
退出码：0 核对通过 · 1 有回答但没通过核对 · 2 用法、配置或输入错误 · 3 服务出错或没有可用结果 · 4 程序内部出错
· 130 被中断
"""
from sourced_answers.cli.launch import guard_startup, run

guard_startup(__name__)  # 最先做：导入下面这些模块的时候按 Ctrl-C 也安静地结束

# check、support 是原教程的接口，教程的测试从这里导入；answer_question、verify_answer 是给别的 Python 程序用的
from sourced_answers.checker import check, support
from sourced_answers.cli.python_api import answer_question, verify_answer
from sourced_answers.cli.run import main, run_question

__all__ = ["check", "support", "main", "run_question", "answer_question", "verify_answer"]

if __name__ == "__main__":
    run(main)
