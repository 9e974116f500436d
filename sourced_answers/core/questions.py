"""问题只在这里整理一次（命令行的问题、--eval 问题文件里的每一行）：终端控制序列去掉、其余控制字符换成空格、空白合并；
不是有效的文字、没有任何字、太长，都在付费之前报错（QuestionError，退出码 2；--serve 回 400 和它的错误码
invalid_question、empty_question、question_too_long）。MAX_QUESTION 是整理之后的字符数。"""
from sourced_answers.checker import strip_terminal
from sourced_answers.core.errors import QuestionError
from sourced_answers.core.strings import SURROGATE

MAX_QUESTION = 1000


def clean_question(text: str, where: str = "问题") -> str:
    """问题只在这里整理一次：终端控制序列去掉、其余控制字符换成空格、空白合并；
    不是有效的文字、没有任何字、太长，都在付费之前报错。"""
    if SURROGATE.search(text):
        raise QuestionError(f"{where}不是有效的 UTF-8 文字（终端的编码可能是 GBK 之类）：请把终端设成 UTF-8 再试",
                            "invalid_question")
    question = tidy(text)
    if not any(char.isalnum() for char in question):
        raise QuestionError(f"{where}里没有文字（只有空白、标点或控制字符），请给出要问的问题", "empty_question")
    if len(question) > MAX_QUESTION:
        raise QuestionError(f"{where}太长（{len(question)} 个字符），请控制在 {MAX_QUESTION} 个字符以内",
                            "question_too_long")
    return question


def tidy(text: str) -> str:
    """去掉终端控制序列、控制字符和双向控制符，空白合并（不检查别的：对话里之前的问题用它）。"""
    return " ".join(strip_terminal(text).split())
