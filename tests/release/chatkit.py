"""A real chat-completions server on 127.0.0.1 for the annotation tests: it knows the truth of the images it is told.

It answers the request kinds the builder sends (told apart by `response_format.json_schema.name`):
`garment_attributes` (annotation), `verdict` (judge), `garments` (detection), `paraphrase` (a composed query's
text, no image) and `composed_verdict` (the composed audit: reference and target images). Each image (identified by
the sha256 of the JPEG it receives; a paraphrase by `paraphrase:` + the template text) can be given a script of
behaviours, one per request: `ok`, `429`, `500`, `slow` (sleeps past the client timeout), `trickle` (a complete
reply, sent a byte every `trickle_s`), `malformed` (content that is not JSON), `invalid` (a value outside the
vocabulary), `reject` (HTTP 400), `wrong` (a valid but wrong answer), and replies that are not chat completions:
`body-list` (the body is `[]`), `body-null` (`null`) and `usage-text` (non-numeric usage fields). `down` makes every
request a 503. Paraphrases also know `drop` (a rewording that loses the change), `empty` and `huge` (5,000
characters).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from conftest import serving
from lookbench.evaluation.composed.texts import phrase
from lookbench.release.vlm.images import decode_data_url, prepared
from lookbench.taxonomy import load_taxonomy

MAX_BODY = 20_000_000


@dataclass
class Truth:
    """What the server knows about one image it may receive."""

    category: str
    main: str
    others: list[str]
    boxes: list[tuple[str, list[float]]] = field(default_factory=list)
    size: tuple[int, int] = (0, 0)
    """Photo size the boxes are in (detection only)."""


@dataclass
class ChatServer:
    """State shared with the handler: truths and scripts by JPEG sha256, counters, switches."""

    truths: dict[str, Truth] = field(default_factory=dict)
    scripts: dict[str, list[str]] = field(default_factory=dict)
    judge_errs_every: int = 0
    """The judge flips its verdict on every n-th distinct (image, attribute) it sees (0: never)."""
    annotate_errs_every: int = 0
    """The annotator gives a wrong colour on every n-th distinct image (0: never)."""
    slow_s: float = 0.5
    trickle_s: float = 0.05
    down: bool = False
    down_after: int | None = None
    requests: Counter[str] = field(default_factory=Counter)
    seen: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    port: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def learn(self, image: bytes, truth: Truth, max_side: int = 768) -> str:
        """Register the truth of an image as the client will send it; returns the key."""
        jpeg, _ = prepared(image, max_side)
        key = hashlib.sha256(jpeg).hexdigest()
        self.truths[key] = truth
        return key

    def next_behaviour(self, key: str) -> str:
        with self.lock:
            script = self.scripts.get(key)
            return script.pop(0) if script else "ok"

    def ordinal(self, key: str) -> int:
        with self.lock:
            return self.seen.setdefault(key, len(self.seen) + 1)


def _group_answer(truth: Truth, wrong: bool) -> dict[str, Any]:
    taxonomy = load_taxonomy()
    values = {truth.main, *truth.others}
    answer: dict[str, Any] = {"category": truth.category}
    for group, allowed in taxonomy.category(truth.category).attributes.items():
        picked = [v for v in allowed if v in values]
        if wrong and group == "colour" and picked:
            picked = [next(v for v in allowed if v not in values)]
        answer[group] = picked if taxonomy.groups[group].multi else (picked[0] if picked else None)
    main_group = taxonomy.group_of(truth.main)
    main = answer[main_group]
    answer["main_attribute"] = main[0] if isinstance(main, list) and main else main if main else truth.main
    return answer


def _annotation(server: ChatServer, key: str, truth: Truth, behaviour: str) -> str:
    if behaviour == "malformed":
        return '{"category": "' + truth.category + '", "colour": '
    if behaviour == "invalid":
        return json.dumps({**_group_answer(truth, False), "main_attribute": "sparkly"})
    errs = server.annotate_errs_every
    wrong = behaviour == "wrong" or (errs > 0 and server.ordinal(key) % errs == 0)
    return json.dumps(_group_answer(truth, wrong))


def _verdict(server: ChatServer, key: str, truth: Truth, text: str) -> str:
    proposed = text.split("Proposed value: '")[1].split("'")[0]
    right = proposed in {truth.main, *truth.others}
    errs = server.judge_errs_every
    if errs > 0 and server.ordinal(key + proposed) % errs == 0:
        right = not right
    taxonomy = load_taxonomy()
    group = taxonomy.category(truth.category).attributes[taxonomy.group_of(proposed)]
    better = next((v for v in group if v in {truth.main, *truth.others}), None) if not right else None
    return json.dumps({"verdict": "correct" if right else "incorrect", "better_value": better})


def _detection(truth: Truth, sent: tuple[int, int], original: tuple[int, int]) -> str:
    sx, sy = sent[0] / original[0], sent[1] / original[1]
    garments = [{"category": c, "box": [b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy]} for c, b in truth.boxes]
    garments.append({"category": "hat", "box": [1, 1, 3, 3]})  # tiny: must be dropped
    garments.append({"category": "hat", "box": [40, 40, 40, 90]})  # degenerate: must be dropped
    return json.dumps({"garments": garments})


def paraphrase_key(prompt: str) -> str:
    """The script key of a paraphrase request: `paraphrase:` + the template text it rewords."""
    return "paraphrase:" + prompt.split("Request: ", 1)[1].split("\n", 1)[0]


def _paraphrase(prompt: str, behaviour: str) -> str:
    request = prompt.split("Request: ", 1)[1].split("\n", 1)[0]
    if behaviour == "malformed":
        return '{"text": "I would like'
    text = {"drop": "I like this one", "empty": "", "huge": "x" * 5000}.get(behaviour, f"Could I have this, {request}?")
    return json.dumps({"text": text})


def _composed_verdict(reference: Truth, target: Truth, prompt: str) -> str:
    """The text describes the change when it names every value the target has and the reference lacks."""
    text = prompt.split("A shopper wrote: '", 1)[1].split("'. The intended change", 1)[0].casefold()
    new = {target.main, *target.others} - {reference.main, *reference.others}
    describes = all(phrase(v).casefold() in text or v.casefold() in text for v in new)
    right = reference.category == target.category
    return json.dumps({"describes_change": "yes" if describes else "no", "target_right": "yes" if right else "no"})


def _reply(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": len(content) // 4},
    }


def _handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: object, trickle: bool = False) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if not trickle:
                self.wfile.write(data)
                return
            try:
                for byte in data:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                    time.sleep(server.trickle_s)
            except OSError:
                pass  # the client gave up, as it should

        def do_POST(self) -> None:  # noqa: N802
            with server.lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                self._answer()
            finally:
                with server.lock:
                    server.in_flight -= 1

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            if self.path != "/v1/chat/completions" or length > MAX_BODY:
                self._send(404, {"error": {"message": "not found"}})
                return
            body = json.loads(self.rfile.read(length))
            kind = body["response_format"]["json_schema"]["name"]
            with server.lock:
                server.requests[kind] += 1
                total = sum(server.requests.values())
            if server.down or (server.down_after is not None and total > server.down_after):
                self._send(503, {"error": {"message": "down"}})
                return
            parts = body["messages"][0]["content"]
            text = next(p["text"] for p in parts if p["type"] == "text")
            images = [decode_data_url(p["image_url"]["url"]) for p in parts if p["type"] == "image_url"]
            keys = [hashlib.sha256(jpeg).hexdigest() for jpeg in images]
            key = keys[0] if keys else paraphrase_key(text)
            behaviour = server.next_behaviour(key)
            if behaviour in ("429", "500"):
                self._send(int(behaviour), {"error": {"message": behaviour}})
                return
            if behaviour == "reject":
                self._send(400, {"error": {"message": "invalid image"}})
                return
            if behaviour == "slow":
                time.sleep(server.slow_s)
            if behaviour in ("body-list", "body-null"):
                self._send(200, [] if behaviour == "body-list" else None)
                return
            if kind == "paraphrase":
                self._send(200, _reply(_paraphrase(text, behaviour)))
                return
            truth = server.truths.get(key)
            if truth is None:
                self._send(400, {"error": {"message": "unknown image"}})
                return
            if kind == "garment_attributes":
                content = _annotation(server, key, truth, behaviour)
            elif kind == "verdict":
                content = _verdict(server, key, truth, text)
            elif kind == "composed_verdict":
                target = server.truths.get(keys[1])
                if target is None:
                    self._send(400, {"error": {"message": "unknown target image"}})
                    return
                content = {
                    "malformed": '{"describes_change": "ye',
                    "invalid": json.dumps({"describes_change": "maybe", "target_right": "yes"}),
                }.get(behaviour) or _composed_verdict(truth, target, text)
            else:
                size = text.split("The image is ")[1].split(" pixels")[0].split("x")
                content = _detection(truth, (int(size[0]), int(size[1])), truth.size)
            reply = _reply(content)
            if behaviour == "usage-text":
                reply["usage"] = {"prompt_tokens": "many", "completion_tokens": None}
            self._send(200, reply, trickle=behaviour == "trickle")

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def serve(server: ChatServer) -> Iterator[ChatServer]:
    """Run the server on 127.0.0.1 (a free port) until the block ends."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(server))
    httpd.daemon_threads = True
    with serving(httpd) as server.port:
        yield server
