"""对话里的追问：一条规则把最后一个问题变成能单独拿去搜索的问题，聊天程序自己的后台任务（起标题、打标签、
猜后续问题）的认法，和 Open WebUI 起标题的任务的标题。只处理字符串。

追问的规则（不问模型：不花时间、不花钱、结果可以预料）。最后一个问题是追问，如果它
  · 以“那”“那么”“还有”“另外”“如果是”“换成”“and”“what about”“how about”这类承接的话开头，或者以“呢”结尾；
  · 不长于 POINTER_LIMIT 个字符，说着“它”“这个”“那些”“前者”“两者”“it”“they”“that”这类指代；
  · 或者短到说不清在问什么（去掉标点不到 MIN_STANDALONE 个字）。
追问时搜索的问题是之前最近一个不是追问的问题，接上那之后的追问（最多 MAX_CHAIN 个）和这个问题：
“RAID1 和 RAID0 有什么区别” 之后的 “那 RAID5 呢？” 搜的是 “RAID1 和 RAID0 有什么区别 那 RAID5 呢？”。
搜索的问题最多 MAX_QUERY 个字符（超出时留下最后的部分）。
"""
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

# 承接上文的开头（中文、英文）
LEADS = re.compile(r"^(?:那么?|那如果|那要是|还有|另外|再问|如果是|要是|换成|换作|同样|也是|又|以及|"
                   r"和.{1,20}比(?:呢|起来)?|(?:and|also|so|then|what about|how about|what if|and if|or)\b)",
                   re.IGNORECASE)
# 指代上文的词
# 指代上文的词：只在短问题里算（长问题里的“这个”“it”多半指问题自己说的东西）
POINTERS = re.compile(r"它们?|他们|这个|那个|这些|那些|这种|那种|这款|那款|上面|上述|刚才|前者|后者|两者|二者|其中|"
                      r"\b(?:it|its|they|them|their|this|that|these|those|former|latter|both|either|which one|"
                      r"the other)\b", re.IGNORECASE)
POINTER_LIMIT = 30
ENDS_WITH_NE = re.compile(r"呢[\s？?！!。.]*$")
# 去掉空白和标点以后不到这么多个字的问题说不清在问什么（“为什么？”“多少钱”“具体呢”）
MIN_STANDALONE = 5
# 追问接在它之前最近的一个问题后面：最多接上这么多个之间的追问
MAX_CHAIN = 2
MAX_QUERY = 300
# 给回答的模型看的上文：最近这么多轮，每轮最多这么多字符（之前的回答很长时只留开头）
MAX_HISTORY_TURNS = 6
MAX_TURN_CHARS = 1500
# 聊天程序自己的后台任务：Open WebUI 的模板都以这一行开头（起标题、打标签、猜后续问题、生成搜索词、自动补全……）
TASK_PREFIX = re.compile(r"^\s*###\s*Task:", re.IGNORECASE)

# Open WebUI 起标题的任务（0.12.4 的默认模板，以前的版本也一样）：“### Task:” 之后、下一个 “###” 之前说的是起标题，
# 要的是 { "title": … } 的 JSON（它从回答里第一个 { 到最后一个 } 取出 JSON，读 "title"），对话记录在
# <chat_history> 里，每条消息一行开头 “USER: ”“ASSISTANT: ”。标题只在这样的任务上由程序给出
TITLE_TASK = re.compile(r"^\s*###\s*Task:(?:(?!###).)*?\btitle\b", re.IGNORECASE | re.DOTALL)
TITLE_FORMAT = re.compile(r'\{\s*"title"\s*:')
CHAT_HISTORY = ("<chat_history>", "</chat_history>")
FIRST_QUESTION = re.compile(r"^USER: *(.*)$", re.MULTILINE)
# 标题最多这么多个字符（多了截断，末尾加“…”）：Open WebUI 的侧栏一行放得下，它的模板也要短标题
MAX_TITLE = 30
ELLIPSIS = "…"
# 标题两头不要的：Markdown 的标记、引号和括号、句末的标点
TITLE_EDGES = "#>*-_`\"'“”‘’「」『』《》()（）[]【】 \t"
TITLE_END = "。．.？?！!，,、；;：:…~～" + TITLE_EDGES


@dataclass(frozen=True)
class Turn:
    """对话里的一轮：role 是 "user" 或 "assistant"，text 是文字。"""
    role: str
    text: str


def is_follow_up(question: str) -> bool:
    """这个问题要靠上文才说得清吗（见模块说明的规则）。"""
    text = question.strip()
    letters = sum(char.isalnum() for char in text)
    if LEADS.search(text) or ENDS_WITH_NE.search(text) or letters < MIN_STANDALONE:
        return True
    return len(text) <= POINTER_LIMIT and bool(POINTERS.search(text))


def standalone_query(question: str, earlier: Sequence[str]) -> str:
    """搜索用的问题：question 不是追问、或者之前没有问题时就是它；是追问时接在之前最近一个不是追问的问题
    （和那之后最多 MAX_CHAIN 个追问）后面。earlier：之前用户问过的问题，按先后。"""
    if not earlier or not is_follow_up(question):
        return question
    chain: list[str] = []
    for before in reversed(earlier):
        chain.insert(0, before)
        if not is_follow_up(before):
            break
    if len(chain) > MAX_CHAIN + 1:
        chain = [chain[0], *chain[-MAX_CHAIN:]]
    query = " ".join([*chain, question])
    return query if len(query) <= MAX_QUERY else query[-MAX_QUERY:].lstrip()


def is_background_task(text: str) -> bool:
    """聊天程序自己的后台任务（Open WebUI 起标题、打标签、猜后续问题……），不是用户的问题。"""
    return bool(TASK_PREFIX.match(text))


def recent(turns: Sequence[Turn]) -> tuple[Turn, ...]:
    """给回答的模型看的上文：最近 MAX_HISTORY_TURNS 轮，每轮最多 MAX_TURN_CHARS 个字符，空的不要。"""
    kept = [Turn(turn.role, turn.text.strip()[:MAX_TURN_CHARS]) for turn in turns if turn.text.strip()]
    return tuple(kept[-MAX_HISTORY_TURNS:])


def task_title(text: str) -> str | None:
    """Open WebUI 起标题的任务（见 TITLE_TASK）→ 标题：对话里第一个问题的第一行，去掉两头的标点和标记，
    最多 MAX_TITLE 个字符。不是这样的任务、要的不是 JSON 的标题、对话里没有问题（或者只有标点）时是 None：
    那就照常问模型。用问题本身做标题不假装是模型起的：Open WebUI 自己不起标题时也是用第一个问题。"""
    if not TITLE_TASK.match(text) or not TITLE_FORMAT.search(text):
        return None
    opening, closing = CHAT_HISTORY
    start, end = text.find(opening), text.rfind(closing)
    question = FIRST_QUESTION.search(text, start + len(opening), end) if 0 <= start < end else None
    if question is None:
        return None
    title = " ".join(question.group(1).split()).strip(TITLE_EDGES).rstrip(TITLE_END)
    if not any(char.isalnum() for char in title):
        return None
    return short_title(title)


def short_title(title: str) -> str:
    """不超过 MAX_TITLE 个字符：长的截断，末尾加“…”；有空格的（英文这样的）在词和词之间截断。"""
    if len(title) <= MAX_TITLE:
        return title
    cut = title[:MAX_TITLE - len(ELLIPSIS)]
    space = cut.rfind(" ")
    if space > MAX_TITLE // 2 and title[len(cut)] != " ":
        cut = cut[:space]
    return cut.rstrip(TITLE_END) + ELLIPSIS


def title_json(title: str) -> str:
    """回给起标题的任务的文字：Open WebUI 要的 JSON，{"title": 标题}。"""
    return json.dumps({"title": title}, ensure_ascii=False)
