"""The configured MCP servers' resources for the life of one process (``serve``, or one CLI command).

``ResourceHub.start()`` runs one thread with its own event loop, where a ``ServerReader`` per server starts
it, reads it and follows its changes. Any thread may ask for ``snapshot()``: the resources and every
server's report at one moment, with a version that grows with every change. ``wait_loaded`` waits for every
server's first load (read, or failed: each call is bounded, and a server that does not answer is reported
at its deadline). ``close()`` stops the servers. Nothing is written anywhere.

The MCP SDK is imported on the hub's thread, and only when a server is configured: a process that does not
read MCP resources never loads it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from agentty_rag.config import environment_without_agentty
from agentty_rag.jobs import Job, Supervisor
from agentty_rag.mcp_resources.model import ReaderOptions, ServerReport, Snapshot
from agentty_rag.mcp_resources.servers import ServerList

if TYPE_CHECKING:
    import anyio
    import anyio.lowlevel

    from agentty_rag.mcp_resources.reader import ServerReader

log = logging.getLogger(__name__)
STOP_WAIT_S = 10.0  # a stdio server that ignores its closed stdin is stopped by the SDK within seconds


class ResourceHub:
    """Every configured server's resources, read on a thread of their own.

    Args:
        servers: which servers (``configured_servers``).
        options: the bounds and caps.
        environment: a stdio server's environment before its entry's ``env`` (default: this process's, less
            ``AGENTTY_*`` variables, so a server that is agentty-rag never reads MCP resources itself).
        protocol: ``auto`` (the SDK's negotiation) or ``legacy`` (the ``initialize`` handshake only).
    """

    def __init__(
        self,
        servers: ServerList,
        options: ReaderOptions,
        environment: Mapping[str, str] | None = None,
        protocol: str = "auto",
        jobs: Supervisor | None = None,
    ) -> None:
        self.servers = servers
        self.jobs = jobs if jobs is not None else Supervisor()
        self.options = options
        self._environment = dict(environment_without_agentty() if environment is None else environment)
        self._protocol = protocol
        reports = tuple(ServerReport(s.name, s.origin, s.target) for s in servers.servers)
        self._snapshot = Snapshot(0, (), reports, servers.problems)
        self._changed = threading.Condition()
        self._job: Job | None = None
        self._closing = False
        self._stop: anyio.Event | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._readers: list[ServerReader] = []

    # -- any thread -----------------------------------------------------------------------------------------

    def start(self) -> ResourceHub:
        """Start reading every server (once; nothing happens when none is configured)."""
        if self._job is not None or not self.servers.servers:
            return self
        running = threading.Event()
        self._job = self.jobs.start("mcp-resources", lambda stop: self._run(running))
        running.wait()
        return self

    @property
    def started(self) -> bool:
        return self._job is not None

    def snapshot(self) -> Snapshot:
        """The resources and reports now."""
        with self._changed:
            return self._snapshot

    def wait_for(self, condition: Callable[[Snapshot], bool], timeout_s: float) -> Snapshot:
        """The first snapshot ``condition`` holds for, or the last one after ``timeout_s``."""
        with self._changed:
            self._changed.wait_for(lambda: condition(self._snapshot), timeout=max(0.0, timeout_s))
            return self._snapshot

    def wait_loaded(self, timeout_s: float) -> Snapshot:
        """The snapshot once every server's first load has ended (or after ``timeout_s``)."""
        return self.wait_for(lambda snapshot: snapshot.loaded, timeout_s)

    def close(self) -> None:
        """Stop every server (a stdio server is stopped as the SDK does: stdin closed, then a signal)."""
        job, self._job = self._job, None
        if job is None:
            return
        self._closing = True
        if self._stop is not None and self._token is not None:
            import anyio.from_thread

            try:
                anyio.from_thread.run_sync(self._stop.set, token=self._token)
            except RuntimeError:  # the loop already ended
                pass
        if not job.join(STOP_WAIT_S):
            log.warning("MCP servers still stopping after %.0f s; leaving them to the process's exit", STOP_WAIT_S)

    # -- the hub's job -------------------------------------------------------------------------------------

    def _run(self, running: threading.Event) -> None:
        """The job ``mcp-resources``: the readers' event loop. If it raises, the supervisor logs it and runs it
        again after a back-off (each server is started again); once closing, it is not started again."""
        import anyio  # on the hub's job only: a process without MCP servers never loads it

        if self._closing:
            return
        try:
            anyio.run(self._main, running)
        finally:
            running.set()

    async def _main(self, running: threading.Event) -> None:
        import anyio.lowlevel

        self._stop = anyio.Event()
        self._token = anyio.lowlevel.current_token()
        running.set()
        from agentty_rag.mcp_resources.reader import ServerReader  # the SDK: only a process that reads servers

        self._readers = [
            ServerReader(spec, self.options, self._publish, self._environment, self._protocol)
            for spec in self.servers.servers
        ]
        async with anyio.create_task_group() as tasks:
            for reader in self._readers:
                tasks.start_soon(reader.run)
            await self._stop.wait()
            tasks.cancel_scope.cancel()

    def _publish(self) -> None:
        """A new snapshot from every reader's state (called on the hub's loop, where the readers live)."""
        readers = self._readers
        resources = sorted(
            (res for r in readers for res in r.resources.values()), key=lambda res: (res.server, res.uri)
        )
        with self._changed:
            self._snapshot = Snapshot(
                self._snapshot.version + 1,
                tuple(resources),
                tuple(r.report for r in readers),
                self.servers.problems,
            )
            self._changed.notify_all()


__all__ = ["ResourceHub"]
