"""Raw pages kept as WARC/1.1 response records (gzip per record), appended to one file per run."""

from __future__ import annotations

import io
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

_DROPPED = {"content-encoding", "transfer-encoding", "content-length"}


class WarcLog:
    """Appends `response` records to a `.warc.gz` file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.records = 0

    def write(self, url: str, status: int, headers: dict[str, str], body: bytes) -> None:
        """Append one response; the body is stored decoded, so encoding headers are replaced by its length."""
        kept = [(k, v) for k, v in headers.items() if k.lower() not in _DROPPED]
        kept.append(("Content-Length", str(len(body))))
        http_headers = StatusAndHeaders(f"{status} -", kept, protocol="HTTP/1.1")
        with self.path.open("ab") as fh:
            writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
            record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http_headers)
            writer.write_record(record)
        self.records += 1
