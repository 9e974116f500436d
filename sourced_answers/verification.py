"""--verify：核对保存下来的回答（--json 的输出，一个对象或 JSON Lines），不搜索、不调用回答的模型。

可以加 --fix（只做确定性修正）、--judge（请评判模型看字面核对放过的句子）和 --html。
"""
import json
from collections.abc import Callable
from typing import IO

from sourced_answers.check_steps import check_and_fix, judge_asker
from sourced_answers.config import Config
from sourced_answers.errors import ExitCode
from sourced_answers.preflight import check_models, judge_key, probe_timeout
from sourced_answers.records import Record, parse_saved_answers, read_saved_file, result_record
from sourced_answers.render import render_result
from sourced_answers.retrying import Deadline
from sourced_answers.review_page import save_review_page
from sourced_answers.safe_output import Output


def verify(config: Config, out: Output, log: Callable[[str], None], stdin: IO[bytes]) -> int:
    path = config.verify or "-"
    name = "标准输入" if path == "-" else path
    answers = parse_saved_answers(read_saved_file(path, stdin), name)
    if config.judge:
        check_models(config.judge_url, [config.judge], role="评判模型", timeout=probe_timeout(config),
                     key=judge_key(config))
    judge = judge_asker(config, Deadline(config.timeout))
    all_passed = True
    step_error = None
    reviewed: list[Record] = []
    for saved in answers:
        checked = check_and_fix(saved.answer, saved.sources, config, judge=judge)
        all_passed = all_passed and checked.report.passed
        if checked.step_error and not step_error:
            step_error = checked.step_error
            judge = None  # 评判模型出错了：剩下的回答不再问它，只做字面核对
        record = result_record(saved.question, saved.model, checked.answer, saved.sources, checked.report,
                               checked.fix, checked.judged)
        reviewed.append(record)
        if config.json:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        else:
            if saved.line and len(answers) > 1:
                out.write(f"── 第 {saved.line} 行 ──\n")
            out.write(render_result(checked) + "\n")
    if step_error:
        log(f"✗ {step_error}（回答和字面核对的结论已经输出）")
    if config.html:
        out.flush()
        save_review_page(config.html, reviewed, config.secrets)
    if step_error:
        return ExitCode.SERVICE
    return ExitCode.PASSED if all_passed else ExitCode.FAILED
