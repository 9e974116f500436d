"""core/conversation.py：追问的规则（搜索的问题接上上文）、聊天程序后台任务的认法和 Open WebUI 起标题的任务的标题。"""
import json

import pytest

from sourced_answers.core.conversation import (
    MAX_HISTORY_TURNS,
    MAX_QUERY,
    MAX_TITLE,
    MAX_TURN_CHARS,
    Turn,
    is_background_task,
    is_follow_up,
    recent,
    standalone_query,
    task_title,
    title_json,
)

RAID = "RAID1 和 RAID0 有什么区别？"


@pytest.mark.parametrize("question", ["那 RAID5 呢？", "那么 RAID6 怎么样", "还有别的选择吗", "换成 SMR 硬盘会怎样",
                                      "它要几块盘？", "这两者哪个更安全", "为什么？", "多少钱", "群晖的呢",
                                      "What about RAID 6?", "How about two drives?", "Is it safe?", "and RAID 10"])
def test_a_question_that_leans_on_what_came_before_is_a_follow_up(question):
    assert is_follow_up(question)


@pytest.mark.parametrize("question", ["家用 NAS 怎么选", "RAID5 至少几块盘", "我应该选择哪个牌子的 NAS 比较好",
                                      "NAS 硬盘选 CMR 还是 SMR", "How many drives does RAID 5 need?",
                                      "Is it worth buying a NAS for a family of four with many photos?"])
def test_a_question_that_stands_on_its_own_is_not(question):
    assert not is_follow_up(question)


def test_a_follow_up_is_searched_together_with_the_question_it_follows():
    assert standalone_query("那 RAID5 呢？", [RAID]) == f"{RAID} 那 RAID5 呢？"


def test_a_chain_of_follow_ups_keeps_its_root_and_the_latest_steps():
    earlier = [RAID, "那 RAID5 呢？", "RAID6 呢？", "它们的写入速度呢？"]
    query = standalone_query("要几块盘？", earlier)
    assert query == f"{RAID} RAID6 呢？ 它们的写入速度呢？ 要几块盘？"


def test_a_new_topic_starts_over_and_a_first_question_is_searched_as_it_is():
    assert standalone_query("家用 NAS 怎么选", [RAID]) == "家用 NAS 怎么选"
    assert standalone_query("那 RAID5 呢？", []) == "那 RAID5 呢？"


def test_the_search_query_is_bounded_and_keeps_the_question():
    query = standalone_query("那 RAID5 呢？", ["很长的问题" * 200])
    assert len(query) <= MAX_QUERY and query.endswith("那 RAID5 呢？")


def test_the_model_sees_only_the_last_few_turns_each_cut_to_a_bounded_length():
    turns = [Turn("user" if n % 2 == 0 else "assistant", f"第 {n} 轮" + "字" * 5000) for n in range(20)] + [Turn("user", "  ")]
    kept = recent(turns)
    assert len(kept) == MAX_HISTORY_TURNS and kept[-1].text.startswith("第 19 轮")
    assert all(len(turn.text) <= MAX_TURN_CHARS for turn in kept)


@pytest.mark.parametrize("prompt", [
    "### Task:\nGenerate a concise title summarizing the chat history.\n<chat_history>…</chat_history>",
    "### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history",
    "### Task:\nPredict 3-5 useful messages this user might naturally send next",
    "### Task:\nSuggest 3-5 relevant follow-up questions or prompts that the user might naturally ask next",
    "### Task:\nAnalyze the chat history to determine the necessity of generating search queries",
    "  ### task: You are an autocompletion system.",
])
def test_open_webui_background_tasks_are_recognised(prompt):
    assert is_background_task(prompt)


def test_a_question_about_tasks_is_not_a_background_task():
    assert not is_background_task("家用 NAS 的 ### Task: 是什么意思")


# ---------- Open WebUI 起标题的任务：标题就是对话里第一个问题 ----------

def title_task(history, output='JSON format: { "title": "your concise title here" }'):
    """Open WebUI 0.12.4 起标题的任务的样子：任务、要的 JSON、对话记录（每条一行 “USER: …”“ASSISTANT: …”）。"""
    return ("### Task:\nGenerate a concise title summarizing the chat history.\n### Guidelines:\n"
            "- Keep it short: 2-4 words is best.\n### Output:\n" + output + "\n### Chat History:\n"
            "<chat_history>\n" + history + "\n</chat_history>")


def as_open_webui_reads(content):
    """Open WebUI 读标题的办法：从第一个 { 到最后一个 } 当作 JSON，取 "title"。"""
    return json.loads(content[content.find("{"):content.rfind("}") + 1]).get("title")


def test_the_title_is_the_first_question_without_its_question_mark():
    task = title_task("USER: RAID1 和 RAID5 有什么区别？\nASSISTANT: RAID1 是镜像 [1]。\n\n来源：\n- [1] RAID 的几种级别")
    assert task_title(task) == "RAID1 和 RAID5 有什么区别"


def test_a_question_over_several_lines_gives_its_first_line():
    task = title_task("USER: 家用 NAS 怎么选\n预算三千元，主要存照片\nASSISTANT: 至少选两盘位 [1]。")
    assert task_title(task) == "家用 NAS 怎么选"


def test_a_long_question_is_cut_with_an_ellipsis():
    question = "我家里有一台用了五年的群晖两盘位 NAS，现在想换一台能跑 Docker、能转码 4K 视频的新机器，应该怎么选"
    title = task_title(title_task(f"USER: {question}\nASSISTANT: ……"))
    assert title is not None and len(title) <= MAX_TITLE and title.endswith("…")
    assert question.startswith(title[:-1])


def test_a_long_english_question_is_cut_between_words():
    question = "How should I choose a home NAS that can run Docker containers and transcode 4K video for the family?"
    title = task_title(title_task(f"USER: {question}\nASSISTANT: ..."))
    assert title is not None and title.endswith("…") and question.startswith(title[:-1])
    assert question[len(title) - 1] == " "


def test_a_title_task_that_does_not_ask_for_the_json_title_has_no_shortcut():
    assert task_title(title_task("USER: 家用 NAS 怎么选\nASSISTANT: ……", output="Reply with the title only.")) is None


def test_other_background_tasks_have_no_title():
    tags = ('### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history.\n### Output:\n'
            'JSON format: { "tags": ["tag1", "tag2", "tag3"] }\n<chat_history>\nUSER: 家用 NAS 怎么选\n</chat_history>')
    assert task_title(tags) is None


def test_a_title_task_without_a_question_in_its_history_has_no_shortcut():
    assert task_title(title_task("ASSISTANT: 你好，我能帮你什么？")) is None
    assert task_title(title_task("USER: ？？？\nASSISTANT: ……")) is None


def test_the_title_reply_is_read_by_open_webui_as_the_title():
    title = '家用 "NAS" 怎么选'
    assert as_open_webui_reads(title_json(title)) == title
