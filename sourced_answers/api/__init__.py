"""第 8 层：Python API——回答一个问题、核对一个保存下来的回答，都返回 --json 的那条记录。

命令行（cli/）、OpenAI 兼容的服务和 MCP 服务（servers/）都是它上面薄薄的一层，不自己重写任何一步。
给别的程序用的两个函数在顶层的 answer_with_sources 模块里：
from answer_with_sources import answer_question, verify_answer
（它们在 cli/python_api.py：关键字按设置里的声明检查，和命令行一样建好设置，再交给这一层）。
"""
