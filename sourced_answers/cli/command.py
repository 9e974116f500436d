"""answer-with-sources 命令和 python -m sourced_answers 的入口：先接住信号，再导入主程序。

装好的命令是 pip 生成的一个小脚本：它导入这个模块、调用 main()。所以这个模块在文件开头只导入包的根（它只用标准库，
导入这个模块时已经导入了），main() 的第一行先接住 Ctrl-C、SIGTERM、SIGHUP，再导入本项目别的模块。在那之前导入的
只有 sourced_answers 和 sourced_answers.cli 这两个包的 __init__，和解释器自己的启动一样，在这里够不着。
"""
import sourced_answers  # 只导入标准库的 _signal、os（它已经导入了：这个模块在包里）


def main() -> None:
    sourced_answers.catch_signals_while_starting()  # 最先做：在导入本项目别的模块之前
    from sourced_answers.cli.launch import run
    from sourced_answers.cli.run import main as program
    run(program)
