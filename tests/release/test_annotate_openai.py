"""The `openai` annotator against a real local chat-completions server: structured output and every failure path."""

from __future__ import annotations

import hashlib
import json
import time

import pytest
from chatkit import ChatServer, Truth, serve
from releasekit import closed_port, encode, photo

from lookbench.release.config import ApiConfig
from lookbench.release.label.base import InvalidAnswer, Item, check_labels, labels_from_answer
from lookbench.release.label.batch import import_batch, write_batch
from lookbench.release.label.openai import OpenAIAnnotator
from lookbench.release.vlm.cache import AnswerCache
from lookbench.release.vlm.client import ApiUnavailable
from lookbench.taxonomy import category_json_schema, load_taxonomy

TRUTH = Truth("dress", "red", ["striped", "v-neck", "long sleeve", "midi", "a-line"])


def _items(count: int, category: str = "dress") -> list[Item]:
    out = []
    for seed in range(count):
        data = encode(photo(100 + seed))
        out.append(Item(f"s{seed}", data, hashlib.sha256(data).hexdigest(), category))
    return out


def _api(server: ChatServer, **extra: object) -> ApiConfig:
    settings = {"base_url": server.base_url, "model": "qwen-local", "timeout_s": 2, **extra}
    return ApiConfig.model_validate(settings)


def test_answers_are_validated_retried_flagged_and_valid_ones_cached(tmp_path):
    server = ChatServer(slow_s=3.0)
    items = _items(7)
    keys = [server.learn(item.image, TRUTH) for item in items]
    server.scripts = {
        keys[1]: ["429", "500", "ok"],
        keys[2]: ["malformed", "ok"],
        keys[3]: ["invalid", "invalid"],
        keys[4]: ["reject"],
        keys[5]: ["slow", "ok"],
    }
    items.append(Item("odd", items[0].image, items[0].image_sha256, "cape"))
    with serve(server):
        annotator = OpenAIAnnotator(_api(server, timeout_s=1.5), load_taxonomy(), AnswerCache(tmp_path / "c"))
        outcomes = annotator.annotate(items)
        assert [o.main_attribute for o in outcomes] == ["red", "red", "red", None, None, "red", "red", None]
        assert outcomes[0].other_attributes == ["striped", "v-neck", "long sleeve", "midi", "a-line"]
        assert outcomes[2].attempts == 2
        assert outcomes[3].flag.startswith("invalid after 2 answers") and "sparkly" in outcomes[3].flag
        assert outcomes[4].flag.startswith("rejected by the server: HTTP 400")
        assert "not in the taxonomy" in outcomes[7].flag
        usage = annotator.describe()
        assert usage["retries"] == 3 and usage["prompt_tokens"] == 100 * usage["requests"]
        asked = sum(server.requests.values())
        again = OpenAIAnnotator(_api(server), load_taxonomy(), AnswerCache(tmp_path / "c")).annotate(items)
        # valid answers come from the cache; the image answered invalidly and the one the server rejected last
        # time (their scripts are spent now) are asked again: nothing invalid was kept
        assert sum(server.requests.values()) == asked + 2
        assert [o.main_attribute for o in again] == ["red", "red", "red", "red", "red", "red", "red", None]
        assert sum(o.cached for o in again) == 5 and not again[3].cached and not again[4].cached


def test_request_shape(tmp_path):
    server = ChatServer()
    item = _items(1)[0]
    server.learn(item.image, TRUTH)
    annotator = OpenAIAnnotator(
        ApiConfig(base_url="http://127.0.0.1:9/v1", model="m", seed=7), load_taxonomy(), AnswerCache(tmp_path)
    )
    body = annotator.body(item)
    assert body["temperature"] == 0 and body["seed"] == 7 and body["model"] == "m"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == category_json_schema("dress")
    text, image = body["messages"][0]["content"]
    assert "v-neck: A neckline that dips to a point in front." in text["text"]
    assert image["image_url"]["url"].startswith("data:image/jpeg;base64,")


def test_api_down_raises_and_a_rerun_loses_nothing(tmp_path):
    server = ChatServer(down_after=3)
    items = _items(6)
    for item in items:
        server.learn(item.image, TRUTH)
    with serve(server):
        api = _api(server, concurrency=1, retries=1)
        with pytest.raises(ApiUnavailable, match="no answer after 2 tries"):
            OpenAIAnnotator(api, load_taxonomy(), AnswerCache(tmp_path)).annotate(items)
        server.down_after = None
        before = server.requests["garment_attributes"]
        again = OpenAIAnnotator(api, load_taxonomy(), AnswerCache(tmp_path))
        outcomes = again.annotate(items)
        assert all(o.main_attribute == "red" for o in outcomes)
        assert sum(o.cached for o in outcomes) == 3
        assert server.requests["garment_attributes"] - before == 3


def test_a_reply_trickling_a_byte_at_a_time_hits_the_total_deadline(tmp_path):
    server = ChatServer(trickle_s=0.05)  # the ~330-byte reply would take ~17 s
    item = _items(1)[0]
    server.scripts[server.learn(item.image, TRUTH)] = ["trickle", "trickle", "ok"]
    with serve(server):
        annotator = OpenAIAnnotator(_api(server, timeout_s=1, retries=1), load_taxonomy(), AnswerCache(tmp_path))
        started = time.monotonic()
        with pytest.raises(ApiUnavailable, match="no answer after 2 tries.*deadline of 1 s"):
            annotator.annotate([item])
        elapsed = time.monotonic() - started
        assert server.requests["garment_attributes"] == 2
        # the server's third answer is prompt: nothing of the cut-off replies was kept
        assert annotator.annotate([item])[0].main_attribute == "red"
    assert elapsed < 6  # two attempts of 1 s each and the SDK's backoff between them, not 2 x 17 s


def test_connection_refused_is_unavailable(tmp_path):
    api = ApiConfig(base_url=f"http://127.0.0.1:{closed_port()}/v1", model="m", retries=1)
    with pytest.raises(ApiUnavailable, match="ConnectError"):
        OpenAIAnnotator(api, load_taxonomy(), AnswerCache(tmp_path)).annotate(_items(1))


def test_batch_files_round_trip(tmp_path):
    items = _items(3)
    api = ApiConfig(base_url="http://127.0.0.1:9/v1", model="qwen-batch")
    annotator = OpenAIAnnotator(api, load_taxonomy(), AnswerCache(tmp_path / "cache"))
    requests = tmp_path / "batch.jsonl"
    assert write_batch(annotator, [*items, items[0]], requests) == 3
    lines = [json.loads(line) for line in requests.read_text().splitlines()]
    assert {line["url"] for line in lines} == {"/v1/chat/completions"}
    answer = json.dumps({**_answer(), "main_attribute": "red"})
    outputs = [
        {"custom_id": lines[0]["custom_id"], "response": {"status_code": 200, "body": _reply(answer)}},
        {"custom_id": lines[1]["custom_id"], "response": {"status_code": 200, "body": _reply("{broken")}},
        {"custom_id": lines[2]["custom_id"], "response": {"status_code": 500, "body": {}}},
        {"custom_id": "nope", "response": {"status_code": 200, "body": _reply(answer)}},
    ]
    result = tmp_path / "out.jsonl"
    result.write_text("\n".join(json.dumps(o) for o in outputs) + "\n")
    assert import_batch(annotator, items, result) == {"imported": 1, "invalid": 1, "failed": 1, "unknown": 1}
    assert write_batch(annotator, items, requests) == 2
    outcome = annotator.annotate(items[:1])[0]
    assert outcome.cached and outcome.main_attribute == "red"


def _answer() -> dict:
    return {
        "category": "dress",
        "colour": "red",
        "pattern": "striped",
        "neckline": "v-neck",
        "sleeve length": "long sleeve",
        "length": "midi",
        "fit": None,
    }


def _reply(content: str) -> dict:
    return {"choices": [{"message": {"content": content}}], "usage": {"prompt_tokens": 5, "completion_tokens": 5}}


def test_label_validation():
    taxonomy = load_taxonomy()
    assert labels_from_answer(taxonomy, "dress", {**_answer(), "main_attribute": "striped"}) == (
        "striped",
        ["red", "v-neck", "long sleeve", "midi"],
    )
    bad = [
        ({**_answer(), "main_attribute": "blue"}, "not one of the chosen"),
        ({**_answer(), "colour": "denim", "main_attribute": "denim"}, "not allowed"),
        ({**_answer(), "category": "skirt", "main_attribute": "red"}, "category"),
        ({k: v for k, v in _answer().items() if k != "length"} | {"main_attribute": "red"}, "missing"),
        ([1, 2], "not a JSON object"),
    ]
    for answer, message in bad:
        with pytest.raises(InvalidAnswer, match=message):
            labels_from_answer(taxonomy, "dress", answer)
    with pytest.raises(InvalidAnswer, match="repeated"):
        check_labels(taxonomy, "dress", "red", ["red", "midi"])
    with pytest.raises(InvalidAnswer, match="repeats"):
        check_labels(taxonomy, "dress", "red", ["midi", "midi"])


def test_concurrency_limit_and_cost(tmp_path):
    server = ChatServer(slow_s=0.2)
    items = _items(6)
    for item in items:
        server.scripts[server.learn(item.image, TRUTH)] = ["slow"]
    with serve(server):
        api = _api(server, concurrency=2, price_per_million_input=2.0, price_per_million_output=10.0)
        annotator = OpenAIAnnotator(api, load_taxonomy(), AnswerCache(tmp_path))
        assert all(o.main_attribute == "red" for o in annotator.annotate(items))
    assert server.max_in_flight == 2
    usage = annotator.describe()
    assert usage["requests"] == 6 and usage["prompt_tokens"] == 600
    assert usage["cost"] == pytest.approx((600 * 2.0 + usage["completion_tokens"] * 10.0) / 1e6)
