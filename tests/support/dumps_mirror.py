"""A loopback server laid out like dumps.wikimedia.org, serving the translation fixtures.

The tree is ``tests/data/translation/dumps`` (one SQL run, ``20260601``, of enwiki,
simplewiki, metawiki and wikidatawiki; the search index dump of ``20260607``; two days of
``pageview_complete``) plus what the real host also shows around such a tree, made from
copies of it:

* ``<wiki>/20260520/``: an older complete run (the same tables under that run's names);
* ``enwiki/20260620/`` and ``simplewiki/20260620/``: a newer run still going: ``pagetable``
  done, ``pagepropstable`` in progress, ``langlinkstable``, ``redirecttable`` and
  ``namespaces`` waiting (only the page table's file is there);
* ``<wiki>/latest/``: ``<wiki>-latest-<table>.sql.gz`` and its ``-rss.xml``, each the newest
  *done* file of its job, so ``latest`` mixes runs as on the real host (enwiki's page table
  comes from the unfinished 20260620 run);
* ``other/cirrus_search_index/20260531/``: an older complete index dump; ``…/20260614/``: a
  newer one whose shards are there but not ``_SUCCESS``;
* directory listings as nginx's autoindex writes them (``index_name=`` folders linked as
  ``index_name%3D…/``; both spellings are served), and a run folder's status page.

Files answer ``HEAD`` and ``GET`` with ``Content-Length``, ``ETag``, ``Last-Modified``
(the day the file was written) and ``Range``/``If-Range``, through ``dataset_mirror.Mirror``,
whose faults apply per path (:meth:`Mirror.arm` with a :class:`~support.dataset_mirror.Fault`:
a cut transfer, a ``200`` to a ``Range`` request, corrupt bytes, a slow or stalling body, a
status with ``Retry-After``, a redirect). Scenario helpers change the tree:
:meth:`DumpsMirror.set_job` (a run with a job not ``done``), :meth:`DumpsMirror.remove`
(e.g. an index dump's ``_SUCCESS``), :meth:`DumpsMirror.publish_wrong_checksum` and
:meth:`DumpsMirror.put`. ``offline = True`` makes every request fail unanswered, so a test of
an offline mode sees any attempt in :attr:`requests`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass

from support.dataset_mirror import Fault, Mirror
from support.dump_formats import DUMPS

__all__ = ["RUN", "DumpsMirror", "Fault", "serve_dumps"]

#: The fixture tree's run, index dump and pageview days.
RUN = "20260601"
OLD_RUN = "20260520"
NEW_RUN = "20260620"
INDEX_DATE = "20260607"
OLD_INDEX = "20260531"
NEW_INDEX = "20260614"
WIKIS = ("enwiki", "simplewiki", "metawiki", "wikidatawiki")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


def _stamp(date: str, clock: str = "07:31:47") -> tuple[str, str]:
    """``20260601`` → (HTTP date, autoindex date) of that day + 1 at ``clock``."""
    day = dt.date(int(date[:4]), int(date[4:6]), int(date[6:8])) + dt.timedelta(days=1)
    http = f"{DAYS[day.weekday()]}, {day.day:02d} {MONTHS[day.month - 1]} {day.year} {clock} GMT"
    index = f"{day.day:02d}-{MONTHS[day.month - 1]}-{day.year} {clock[:5]}"
    return http, index


@dataclass
class DumpsMirror(Mirror):
    """The dumps host. ``files`` maps paths (``enwiki/20260601/…``) to bytes; directory
    listings are made on request from them."""

    @classmethod
    def standard(cls) -> DumpsMirror:
        mirror = cls()
        for file in sorted(DUMPS.rglob("*")):
            if file.is_file():
                mirror.files[file.relative_to(DUMPS).as_posix()] = file.read_bytes()
        for wiki in WIKIS:
            mirror.copy_run(wiki, RUN, OLD_RUN)
        for wiki in ("enwiki", "simplewiki"):
            mirror.copy_run(
                wiki,
                RUN,
                NEW_RUN,
                statuses={
                    "pagetable": "done",
                    "pagepropstable": "in-progress",
                    "langlinkstable": "waiting",
                    "redirecttable": "waiting",
                    "namespaces": "waiting",
                },
            )
        for old, new in ((INDEX_DATE, OLD_INDEX), (INDEX_DATE, NEW_INDEX)):
            mirror.copy_index(old, new, complete=new == OLD_INDEX)
        mirror.refresh_latest()
        return mirror

    # --- paths ------------------------------------------------------------------------

    def base_url(self) -> str:
        """The ``DUMPS_BASE_URL`` of this host (ends with ``/``)."""
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    @staticmethod
    def run_path(wiki: str, run: str, table: str) -> str:
        """``page`` → ``<wiki>-<run>-page.sql.gz``; a name with its extension
        (``siteinfo-namespaces.json.gz``, ``pages-articles.xml.bz2``) is kept."""
        suffix = "" if "." in table else ".sql.gz"
        return f"{wiki}/{run}/{wiki}-{run}-{table}{suffix}"

    @staticmethod
    def shard_path(date: str, index: str, number: int = 0) -> str:
        folder = f"other/cirrus_search_index/{date}/index_name={index}"
        return f"{folder}/{index}-{date}-{number:05d}.json.bz2"

    @staticmethod
    def pageviews_path(day: str, kind: str = "user") -> str:
        return f"other/pageview_complete/{day[:4]}/{day[:4]}-{day[4:6]}/pageviews-{day}-{kind}.bz2"

    def status(self, wiki: str, run: str) -> dict[str, dict[str, object]]:
        """The run's ``dumpstatus.json`` jobs."""
        data = json.loads(self.files[f"{wiki}/{run}/dumpstatus.json"])
        jobs: dict[str, dict[str, object]] = data["jobs"]
        return jobs

    # --- scenarios ----------------------------------------------------------------------

    def copy_run(
        self, wiki: str, source: str, run: str, statuses: dict[str, str] | None = None
    ) -> None:
        """Publishes ``run`` with ``source``'s tables; jobs whose status is not ``done`` have
        no file (their entry keeps no ``files``)."""
        jobs = self.status(wiki, source)
        new_jobs: dict[str, object] = {}
        for job, entry in jobs.items():
            status = (statuses or {}).get(job, "done")
            updated = f"{run[:4]}-{run[4:6]}-{run[6:]} 18:02:11"
            if status != "done":
                new_jobs[job] = {"status": status, "updated": updated}
                continue
            files = {}
            for name in entry["files"]:  # type: ignore[attr-defined]
                new_name = name.replace(f"-{source}-", f"-{run}-")
                data = self.files[f"{wiki}/{source}/{name}"]
                self.files[f"{wiki}/{run}/{new_name}"] = data
                files[new_name] = self._file_entry(wiki, run, new_name, data)
            new_jobs[job] = {"status": "done", "updated": updated, "files": files}
        self._write_status(wiki, run, new_jobs)

    def set_job(self, wiki: str, run: str, job: str, status: str) -> None:
        """Marks a job of a run (``"in-progress"``, ``"failed"``, ``"waiting"``…); its files
        stay where they are, as after a failed rerun."""
        jobs: dict[str, object] = dict(self.status(wiki, run))
        entry = dict(jobs[job])  # type: ignore[call-overload]
        entry["status"] = status
        jobs[job] = entry
        self._write_status(wiki, run, jobs)

    def publish_wrong_checksum(self, wiki: str, run: str, table: str) -> None:
        """``dumpstatus.json`` and the sum files announce other digests for one table."""
        path = self.run_path(wiki, run, table)
        name = path.rsplit("/", 1)[1]
        jobs = self.status(wiki, run)
        for entry in jobs.values():
            files = entry.get("files") or {}
            if name in files:  # type: ignore[operator]
                files[name]["md5"] = "0" * 32  # type: ignore[index]
                files[name]["sha1"] = "0" * 40  # type: ignore[index]
        self._write_status(wiki, run, dict(jobs))

    def put(self, path: str, data: bytes) -> None:
        self.files[path] = data

    def remove(self, path: str) -> None:
        del self.files[path]

    def copy_index(self, source: str, date: str, complete: bool = True) -> None:
        prefix = f"other/cirrus_search_index/{source}/"
        for path in [p for p in self.files if p.startswith(prefix)]:
            name = path.removeprefix(prefix).replace(f"-{source}-", f"-{date}-")
            if name.endswith("_SUCCESS") and not complete:
                continue
            self.files[f"other/cirrus_search_index/{date}/{name}"] = self.files[path]

    def refresh_latest(self) -> None:
        """``<wiki>/latest/``: per job, the newest done file, and its RSS feed."""
        for wiki in WIKIS:
            for path in [p for p in self.files if p.startswith(f"{wiki}/latest/")]:
                del self.files[path]
            runs = sorted(
                {
                    p.split("/")[1]
                    for p in self.files
                    if p.startswith(f"{wiki}/") and p.split("/")[1].isdigit()
                }
            )
            newest: dict[str, tuple[str, str]] = {}
            for run in runs:
                for entry in self.status(wiki, run).values():
                    if entry.get("status") != "done":
                        continue
                    for name in entry.get("files") or {}:  # type: ignore[attr-defined]
                        newest[name.replace(f"-{run}-", "-latest-")] = (run, name)
            for latest, (run, name) in sorted(newest.items()):
                self.files[f"{wiki}/latest/{latest}"] = self.files[f"{wiki}/{run}/{name}"]
                modified, _ = _stamp(run)
                self.files[f"{wiki}/latest/{latest}-rss.xml"] = (
                    '<?xml version="1.0" encoding="utf-8"?>\n'
                    '<rss version="2.0"><channel>'
                    f"<title>https://dumps.wikimedia.org/{wiki}/latest/{latest}</title>"
                    f"<link>https://dumps.wikimedia.org/{wiki}/latest/</link>"
                    f"<description>Wikimedia dump updates for {wiki}</description>"
                    f"<item><title>https://dumps.wikimedia.org/{wiki}/{run}/{name}</title>"
                    f"<link>https://dumps.wikimedia.org/{wiki}/{run}</link>"
                    f"<description>&lt;a href=&quot;https://dumps.wikimedia.org/{wiki}/{run}/{name}&quot;&gt;{name}&lt;/a&gt;</description>"
                    f"<pubDate>{modified}</pubDate></item></channel></rss>\n"
                ).encode()

    def _file_entry(self, wiki: str, run: str, name: str, data: bytes) -> dict[str, object]:
        return {
            "size": len(data),
            "url": f"/{wiki}/{run}/{name}",
            "md5": hashlib.md5(data).hexdigest(),
            "sha1": hashlib.sha1(data).hexdigest(),
        }

    def _write_status(self, wiki: str, run: str, jobs: dict[str, object]) -> None:
        self.files[f"{wiki}/{run}/dumpstatus.json"] = json.dumps(
            {"jobs": dict(sorted(jobs.items())), "version": "0.8"}
        ).encode()
        sums: dict[str, list[str]] = {"md5": [], "sha1": []}
        for entry in jobs.values():
            for name, file in (entry.get("files") or {}).items():  # type: ignore[attr-defined]
                for kind in sums:
                    sums[kind].append(f"{file[kind]}  {name}\n")
        for kind, lines in sums.items():
            self.files[f"{wiki}/{run}/{wiki}-{run}-{kind}sums.txt"] = "".join(
                sorted(lines, key=lambda s: s.split()[1])
            ).encode()

    # --- serving (hooks of dataset_mirror.Mirror) --------------------------------------

    def normalize(self, path: str) -> str:
        return urllib.parse.unquote(path)

    def resolve(self, path: str) -> bytes | None:
        if path in self.files:
            return self.files[path]
        if path == "" or path.endswith("/"):
            return self._listing(path)
        return None

    def content_headers(self, path: str) -> list[tuple[str, str]]:
        if path == "" or path.endswith("/"):
            kind = "text/html"
        elif path.endswith(".json"):
            kind = "application/json"
        elif path.endswith((".txt", "_SUCCESS")):
            kind = "text/plain"
        elif path.endswith(".xml"):
            kind = "application/xml"
        else:
            kind = "application/octet-stream"
        return [("Content-Type", kind)]

    def last_modified(self, path: str) -> str:
        for part in path.split("/"):
            if len(part) == 8 and part.isdigit():
                return _stamp(part)[0]
        name = path.rsplit("/", 1)[-1]
        if name.startswith("pageviews-"):
            return _stamp(name.split("-")[1], "04:12:55")[0]
        return _stamp(RUN)[0]

    def _children(self, folder: str) -> Iterator[tuple[str, bool]]:
        seen: set[str] = set()
        for path in sorted(self.files):
            if not path.startswith(folder):
                continue
            rest = path[len(folder) :]
            name, sep, _ = rest.partition("/")
            if name and name not in seen:
                seen.add(name)
                yield name, bool(sep)

    def _listing(self, folder: str) -> bytes | None:
        children = list(self._children(folder))
        if not children:
            return None
        parts = folder.rstrip("/").split("/")
        if len(parts) == 2 and parts[0] in WIKIS and parts[1].isdigit():
            return self._run_page(parts[0], parts[1])
        title = html.escape(f"/{folder}")
        lines = [
            f"<html>\r\n<head><title>Index of {title}</title></head>\r\n<body>\r\n"
            f'<h1>Index of {title}</h1><hr><pre><a href="../">../</a>\r\n'
        ]
        for name, is_folder in sorted(children, key=lambda c: (not c[1], c[0])):
            shown = name + ("/" if is_folder else "")
            href = urllib.parse.quote(shown, safe="/-_.~")
            text = html.escape(shown if len(shown) <= 50 else shown[:47] + "..>")
            size = "-" if is_folder else str(len(self.files[folder + name]))
            _, date = _stamp(self._date_of(folder + name))
            lines.append(f'<a href="{href}">{text}</a>{" " * (51 - len(text))}{date}{size:>20}\r\n')
        lines.append("</pre><hr></body>\r\n</html>\r\n")
        return "".join(lines).encode()

    def _date_of(self, path: str) -> str:
        for part in path.split("/"):
            if len(part) == 8 and part.isdigit():
                return part
        return RUN

    def _run_page(self, wiki: str, run: str) -> bytes:
        """The run folder's status page (what the host serves there instead of a listing)."""
        items = []
        for job, entry in self.status(wiki, run).items():
            listed: dict[str, dict[str, object]] = entry.get("files") or {}  # type: ignore[assignment]
            files = "".join(
                f'<li class="file"><a href="/{wiki}/{run}/{name}">{name}</a> '
                f"{file['size']} bytes</li>"
                for name, file in listed.items()
            )
            status, updated = entry["status"], entry.get("updated", "")
            items.append(
                f"<li class='{status}'><span class='updates'>{updated}</span> "
                f"<span class='status'>{status}</span> <span class='title'>{job}</span>"
                f"<ul>{files}</ul></li>"
            )
        return (
            f"<!DOCTYPE html><html><head><title>{wiki} dump progress on {run}</title></head><body>"
            f"<h1>{wiki} dump progress on {run}</h1><ul>{''.join(items)}</ul></body></html>\n"
        ).encode()


def serve_dumps() -> Iterator[DumpsMirror]:
    """A started standard dumps mirror, stopped afterwards (for fixtures)."""
    mirror = DumpsMirror.standard().start()
    assert isinstance(mirror, DumpsMirror)
    try:
        yield mirror
    finally:
        mirror.stop()
