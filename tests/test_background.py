"""servers/background.py 的回答优先（AnswersFirst）：聊天程序的后台任务等到没有回答在做、也没有别的后台任务在问模型时
才去问模型，最多等一个上限（不会饿死）；等的时候提问的客户端走了，它就不再等、也不问模型。in_background：等结果的
任务取消了，守护线程在下一步付费之前停下。

每个测试在自己的事件循环里（asyncio.run）：先后由事件和次序决定，不看钟表。"""
import asyncio
import threading

import pytest

from sourced_answers.core.abandoning import ClientGone, stop_if_gone, watched
from sourced_answers.servers.background import AnswersFirst, in_background


async def settle():
    """让别的协程都走到它们下一个要等的地方（事件循环转几圈）。"""
    for _ in range(5):
        await asyncio.sleep(0)


async def ask_model(first, happened, name="后台任务", time_left=None):
    """一个后台任务：轮到它时记下 name（代替问模型），再留一圈（在问模型的时候别的协程能看见它）。"""
    async with first.task_turn(time_left):
        happened.append(name)
        await settle()


def run(scenario):
    return asyncio.run(scenario())


def test_a_task_waits_while_an_answer_is_in_progress():
    async def scenario():
        first, happened = AnswersFirst(), []
        first.answer_started()
        task = asyncio.create_task(ask_model(first, happened))
        await settle()
        happened.append("回答做完了")
        first.answer_finished()
        await task
        return happened

    assert run(scenario) == ["回答做完了", "后台任务"]


def test_a_task_with_no_answer_in_progress_runs_at_once():
    async def scenario():
        first, happened = AnswersFirst(), []
        task = asyncio.create_task(ask_model(first, happened))
        await asyncio.sleep(0)  # 只让它走一步：不用等，它这一步就问了模型
        happened.append("之后")
        await task
        return happened

    assert run(scenario) == ["后台任务", "之后"]


def test_a_task_waits_for_every_answer_in_progress():
    async def scenario():
        first, happened = AnswersFirst(), []
        first.answer_started()
        first.answer_started()
        task = asyncio.create_task(ask_model(first, happened))
        await settle()
        happened.append("第一个回答做完了")
        first.answer_finished()
        await settle()
        happened.append("第二个回答做完了")
        first.answer_finished()
        await task
        return happened

    assert run(scenario) == ["第一个回答做完了", "第二个回答做完了", "后台任务"]


def test_tasks_ask_the_model_one_after_another():
    async def scenario():
        first, happened = AnswersFirst(), []

        async def slow_task():
            async with first.task_turn(None):
                happened.append("起标题开始")
                await settle()
                happened.append("起标题结束")

        title = asyncio.create_task(slow_task())
        await asyncio.sleep(0)
        tags = asyncio.create_task(ask_model(first, happened, "打标签"))
        await asyncio.gather(title, tags)
        return happened

    assert run(scenario) == ["起标题开始", "起标题结束", "打标签"]


def test_an_answer_that_arrives_while_a_task_waits_goes_first():
    async def scenario():
        first, happened = AnswersFirst(), []
        first.answer_started()
        task = asyncio.create_task(ask_model(first, happened))
        await settle()
        first.answer_started()  # 又来了一个问题
        first.answer_finished()
        await settle()
        happened.append("第二个回答做完了")
        first.answer_finished()
        await task
        return happened

    assert run(scenario) == ["第二个回答做完了", "后台任务"]


def test_a_task_that_waited_its_whole_bound_still_runs():
    async def scenario():
        first, happened = AnswersFirst(limit=0.05), []
        first.answer_started()  # 这个回答一直没有做完
        await asyncio.wait_for(ask_model(first, happened), 10)
        return happened, first.answering

    assert run(scenario) == (["后台任务"], 1)


def test_a_task_waits_at_most_half_the_time_its_request_has_left():
    async def scenario():
        first, happened = AnswersFirst(limit=600), []
        first.answer_started()
        await asyncio.wait_for(ask_model(first, happened, time_left=0.1), 10)
        return happened

    assert run(scenario) == ["后台任务"]


def test_a_task_whose_client_left_while_waiting_never_asks_the_model():
    async def scenario():
        first, happened = AnswersFirst(), []
        gone = threading.Event()
        first.answer_started()
        with watched(gone):
            task = asyncio.create_task(ask_model(first, happened))
        await settle()
        gone.set()
        with pytest.raises(ClientGone):
            await asyncio.wait_for(task, 10)
        return happened, first.waiting

    assert run(scenario) == ([], 0)


def test_the_waiting_count_says_how_many_tasks_wait():
    async def scenario():
        first, happened = AnswersFirst(), []
        first.answer_started()
        tasks = [asyncio.create_task(ask_model(first, happened, name)) for name in ("打标签", "猜后续问题")]
        await settle()
        waiting = first.waiting
        first.answer_finished()
        await asyncio.gather(*tasks)
        return waiting, first.waiting, sorted(happened)

    assert run(scenario) == (2, 0, ["打标签", "猜后续问题"])


# ---------- in_background：等结果的任务取消了，线程里之后要付费的步骤都不做 ----------

def paid_steps(started, go_on, paid):
    """在守护线程里做的事：说一声开始了，等 go_on，再做两步“要付费的”（每一步之前 stop_if_gone，做了就记下）。"""
    started.set()
    go_on.wait(30)
    for step in ("读网页", "请模型回答"):
        stop_if_gone()
        paid.append(step)


def test_cancelling_the_awaiting_task_stops_the_thread_before_its_next_paid_step():
    """MCP 客户端取消调用时，SDK 取消的是等结果的任务；线程不能接着付费。"""
    started, go_on, paid = threading.Event(), threading.Event(), []

    async def scenario():
        task = asyncio.create_task(in_background(paid_steps, started, go_on, paid))
        await asyncio.to_thread(started.wait, 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())

    go_on.set()  # 线程接着做：取消之后的两步都不该做
    for thread in threading.enumerate():
        if thread.name == "paid_steps":
            thread.join(30)
    assert paid == []


def test_a_mark_set_outside_still_counts_inside_in_background():
    """--serve 的“客户端走了”套在外面，in_background 自己的标记在里面：设上外面的那个，线程里照样停下。"""
    gone, started, go_on, paid = threading.Event(), threading.Event(), threading.Event(), []

    async def scenario():
        with watched(gone):
            task = asyncio.create_task(in_background(paid_steps, started, go_on, paid))
        await asyncio.to_thread(started.wait, 30)
        gone.set()
        go_on.set()
        with pytest.raises(ClientGone):
            await task

    asyncio.run(scenario())
    assert paid == []
