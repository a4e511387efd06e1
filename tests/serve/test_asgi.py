"""``unless_disconnected`` and ``DisconnectWatch``: the work's result, its failure, or its
cancellation on a disconnect (its clean-up run)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pawlette.serve.asgi import DisconnectWatch, unless_disconnected


def _receive(disconnect: asyncio.Event) -> Any:
    async def receive() -> dict[str, Any]:
        await disconnect.wait()
        return {"type": "http.disconnect"}

    return receive


def test_the_work_finishes_first() -> None:
    async def main() -> tuple[bool, int | None]:
        async def work() -> int:
            await asyncio.sleep(0)
            return 7

        return await unless_disconnected(_receive(asyncio.Event()), work())

    assert asyncio.run(main()) == (False, 7)


def test_a_disconnect_cancels_the_work_and_its_clean_up_runs_at_once() -> None:
    cleaned: list[str] = []

    async def main() -> tuple[bool, None]:
        disconnect = asyncio.Event()

        async def work() -> None:
            try:
                disconnect.set()
                await asyncio.Event().wait()  # an engine that never answers
            finally:
                await asyncio.sleep(0)  # a clean-up that awaits (closing a connection)
                cleaned.append("closed")

        answer = await unless_disconnected(_receive(disconnect), work())
        assert cleaned == ["closed"]  # before the caller goes on
        return answer  # type: ignore[return-value]

    assert asyncio.run(main()) == (True, None)


def test_the_works_failure_is_raised() -> None:
    async def main() -> None:
        async def work() -> None:
            raise ValueError("broken")

        await unless_disconnected(_receive(asyncio.Event()), work())

    with pytest.raises(ValueError, match="broken"):
        asyncio.run(main())


def test_a_cancellation_from_outside_is_raised_and_cancels_the_work() -> None:
    cleaned: list[str] = []

    async def main() -> None:
        started = asyncio.Event()

        async def work() -> None:
            try:
                started.set()
                await asyncio.Event().wait()
            finally:
                cleaned.append("closed")

        task = asyncio.ensure_future(unless_disconnected(_receive(asyncio.Event()), work()))
        await started.wait()
        task.cancel()  # the server stops: not a disconnect
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cleaned == ["closed"]


def test_a_disconnect_as_the_work_ends_leaves_the_task_uncancelled() -> None:
    """The listener's disconnect and the work's end in one loop turn: the answer says
    disconnected, and the caller's task goes on normally (no stray cancellation)."""

    async def main() -> tuple[tuple[bool, int | None], str]:
        disconnect = asyncio.Event()

        async def work() -> int:
            disconnect.set()
            return 7

        answer = await unless_disconnected(_receive(disconnect), work())
        await asyncio.sleep(0.01)  # a stray cancellation would land here
        return answer, "went on"

    answer, went_on = asyncio.run(main())
    assert went_on == "went on" and answer in ((False, 7), (True, 7), (True, None))


def test_one_watch_serves_several_uses_and_cancels_the_one_in_progress() -> None:
    async def main() -> tuple[Any, Any, list[str]]:
        disconnect = asyncio.Event()
        watch = DisconnectWatch(_receive(disconnect))
        cleaned: list[str] = []

        async def quick() -> int:
            await asyncio.sleep(0)
            return 1

        async def slow() -> int:
            try:
                await asyncio.sleep(30)
            finally:
                cleaned.append("slow")
            return 2

        first = await watch.run(quick())
        listener = watch._listener
        asyncio.get_running_loop().call_later(0.01, disconnect.set)
        second = await watch.run(slow())
        assert watch._listener is listener  # one listener for both uses
        watch.close()
        return first, second, cleaned

    assert asyncio.run(main()) == ((False, 1), (True, None), ["slow"])


def test_a_disconnect_between_uses_still_lets_the_next_work_clean_up() -> None:
    async def main() -> tuple[Any, list[str], bool]:
        disconnect = asyncio.Event()
        watch = DisconnectWatch(_receive(disconnect))
        cleaned: list[str] = []

        async def quick() -> int:
            await asyncio.sleep(0)
            return 1

        async def stream() -> int:
            try:
                await asyncio.sleep(30)
            finally:
                cleaned.append("closed the engine's answer")
            return 2

        await watch.run(quick())
        disconnect.set()
        await asyncio.sleep(0.01)  # the listener hears it while no work is running
        result = await watch.run(stream())
        task = asyncio.current_task()
        assert task is not None
        await asyncio.sleep(0)  # no cancellation left pending for the caller
        cancelling = getattr(task, "cancelling", lambda: 0)  # Python 3.11+
        return result, cleaned, cancelling() == 0

    assert asyncio.run(main()) == ((True, None), ["closed the engine's answer"], True)
