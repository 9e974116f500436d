"""python -m sourced_answers：和 answer-with-sources 命令一样。"""
from sourced_answers.cli.command import main

if __name__ == "__main__":
    main()
