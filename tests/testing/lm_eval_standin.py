"""Run the real lm-evaluation-harness (`lm-eval`, a pip package) against a stand-in model server.

The stand-in is an OpenAI-compatible `/v1/chat/completions` endpoint on 127.0.0.1. It reads the
question of the last user turn, looks up its answer and replies by a per-run policy: the first
`strict` questions in the GSM8K answer form (`... #### 42`, which both filters read), the next
`flexible` ones only as prose (`The answer is 42.`: the flexible filter reads it, the strict one
does not), every other one with a wrong number. So every score lm-eval computes is known
beforehand: strict = strict / N, flexible = (strict + flexible) / N. A policy with `fail` set
answers HTTP 500, as an engine that died does.

The task is a local slice in the shape of GSM8K (`gsm8k`, 5-shot, chat template, few-shot turns
as a conversation, the strict `#### <number>` and flexible last-number filters), written with
its data files into a folder, so nothing is downloaded. lm-eval is started as the reference's eval
stage starts it (model `local-chat-completions`, greedy, `num_concurrent` = the eval concurrency,
samples logged), with small lengths.

`python3 tests/testing/lm_eval_standin.py OUT` (with lm-eval installed: `pip install -e '.[evals]'`)
regenerates tests/data/results/evals/: the eval folders as the eval stage leaves them (see
`write_fixtures`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TASK = "gsm8k"
QUESTIONS = 1319  # the test split, as large as GSM8K's
SHOTS = 5
MAX_REQUESTS = 20_000  # the stand-in refuses more than this many requests in one server's life
MODEL = "deepseek-ai/DeepSeek-V4-Pro"  # the served model name lm-eval records
NAMES = ("Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun")
THINGS = ("marbles", "stamps", "apples", "shells", "coins")


def problem(index: int) -> tuple[str, int, str]:
    """(question, answer, worked solution ending `#### answer`) of question ``index``: fixed arithmetic."""
    name, thing = NAMES[index % len(NAMES)], THINGS[index % len(THINGS)]
    first, more, groups = 3 + index, 2 + (index * 11) % 30, 2 + index % 4  # `first` makes every question unique
    total = (first + more) * groups
    question = (
        f"{name} has {first} {thing} and finds {more} more. Then {name} gathers the same number "
        f"{groups - 1} more times. How many {thing} does {name} have now?"
    )
    solution = (
        f"{name} has {first} + {more} = {first + more} {thing}. {first + more} * {groups} = {total}.\n#### {total}"
    )
    return question, total, solution


TASK_YAML = """\
# A local slice in the shape of GSM8K (5-shot, strict and flexible filters); data: {test}, {train}.
task: gsm8k
dataset_path: json
dataset_kwargs:
  data_files:
    train: {train}
    test: {test}
output_type: generate_until
training_split: train
fewshot_split: train
test_split: test
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_target: "{{{{answer}}}}"
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
    ignore_case: true
    ignore_punctuation: false
    regexes_to_ignore:
      - ","
      - "\\\\$"
      - "(?s).*#### "
      - "\\\\.$"
generation_kwargs:
  until:
    - "Question:"
  do_sample: false
  temperature: 0.0
repeats: 1
num_fewshot: 5
filter_list:
  - name: "strict-match"
    filter:
      - function: "regex"
        regex_pattern: "#### (\\\\-?[0-9\\\\.\\\\,]+)"
      - function: "take_first"
  - name: "flexible-extract"
    filter:
      - function: "regex"
        group_select: -1
        regex_pattern: "(-?[$0-9.,]{{2,}})|(-?[0-9]+)"
      - function: "take_first"
metadata:
  version: 3.0
"""


def write_task(folder: Path, questions: int = QUESTIONS) -> Path:
    """``folder`` with gsm8k.yaml and its two data files (``questions`` test questions, SHOTS worked examples)."""
    folder.mkdir(parents=True, exist_ok=True)
    test, train = folder / "gsm8k_test.jsonl", folder / "gsm8k_train.jsonl"
    test.write_text(
        "".join(json.dumps({"question": q, "answer": s}) + "\n" for q, _, s in map(problem, range(questions)))
    )
    shots = [problem(10_000 + i) for i in range(SHOTS)]
    train.write_text("".join(json.dumps({"question": q, "answer": s}) + "\n" for q, _, s in shots))
    (folder / "gsm8k.yaml").write_text(TASK_YAML.format(test=test, train=train))
    return folder


@dataclass(frozen=True)
class Policy:
    """How the stand-in answers during one lm-eval run (see the module docstring)."""

    strict: int
    flexible: int = 0
    fail: bool = False

    def reply(self, index: int, answer: int) -> str:
        if index < self.strict:
            return f"We add and multiply step by step.\n#### {answer}"
        if index < self.strict + self.flexible:
            return f"We add and multiply step by step. The answer is {answer}."
        return f"We add and multiply step by step.\n#### {answer + 1}"


ANSWERS = {problem(i)[0]: (i, problem(i)[1]) for i in range(QUESTIONS)}
QUESTION = re.compile(r"Question: (?P<question>.*?)\nAnswer:", re.S)


class ChatHandler(BaseHTTPRequestHandler):
    policy = Policy(QUESTIONS)
    served = 0
    lock = threading.Lock()

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with self.lock:
            type(self).served += 1
            over = self.served > MAX_REQUESTS
        policy = type(self).policy
        if over or policy.fail or not self.path.endswith("/chat/completions"):
            self._send(500, {"error": {"message": "stand-in server: failing on purpose", "type": "server_error"}})
            return
        users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
        found = QUESTION.search(users[-1]) if users else None
        index, answer = ANSWERS.get(found["question"].strip(), (-1, -1)) if found else (-1, -1)
        text = policy.reply(index, answer) if index >= 0 else "I do not know."
        self._send(
            200,
            {
                "id": "chatcmpl-standin",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 0, "completion_tokens": len(text.split()), "total_tokens": 0},
            },
        )


class StandinServer(ThreadingHTTPServer):
    request_queue_size = 1024  # lm-eval opens up to `num_concurrent` connections at once (the default backlog is 5)
    daemon_threads = True


@contextmanager
def standin_server() -> Iterator[ThreadingHTTPServer]:
    server = StandinServer(("127.0.0.1", 0), ChatHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def lm_eval_env(cache: Path) -> dict[str, str]:
    """No network: the datasets library reads the local JSON files and caches in ``cache``."""
    return {
        **os.environ,
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_CACHE": str(cache / "datasets"),
        "HF_HOME": str(cache / "hf"),
        "TOKENIZERS_PARALLELISM": "false",
        "LMEVAL_LOG_LEVEL": "WARNING",
    }


def run_lm_eval(
    port: int,
    task_dir: Path,
    out: Path,
    conc: int,
    cache: Path,
    limit: int | None = None,
    timeout: float = 240,
    python: str = sys.executable,
) -> subprocess.CompletedProcess:
    """One lm-eval run as the eval stage starts it; results land under ``out``/<model>/."""
    model_args = (
        f"model={MODEL},base_url=http://127.0.0.1:{port}/v1/chat/completions,"
        f"num_concurrent={conc},max_retries=1,timeout=30,tokenized_requests=False"
    )
    argv = [
        python,
        "-m",
        "lm_eval",
        "run",
        "--model",
        "local-chat-completions",
        "--model_args",
        model_args,
        "--tasks",
        TASK,
        "--include_path",
        str(task_dir),
        "--num_fewshot",
        str(SHOTS),
        "--apply_chat_template",
        "--fewshot_as_multiturn",
        "true",
        "--gen_kwargs",
        "temperature=0,top_p=1,max_gen_toks=64",
        "--log_samples",
        "--output_path",
        str(out),
    ]
    if limit is not None:
        argv += ["--limit", str(limit)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=lm_eval_env(cache), cwd=str(cache))


def staged(out: Path) -> tuple[Path, list[Path]]:
    """The results file and sample files one lm-eval run wrote under ``out`` (<model>/results_<date>.json)."""
    results = sorted(out.glob("*/results_*.json"))
    if len(results) != 1:
        raise RuntimeError(f"expected one lm-eval results file under {out}, found {[str(p) for p in results]}")
    return results[0], sorted(out.glob("*/samples_*.jsonl"))


# --- the committed fixtures -------------------------------------------------------------------

SAMPLE_LINES = 3  # samples files keep their first lines only (each line holds the whole 5-shot conversation)
SMOKE = 100  # EVAL_LIMIT-style slice: 91 right answers read exactly 0.91

# meta_env.json as the reference's eval stage writes it (the fields of its launcher), for the bundled
# row dsv4-fp4-gb300-dynamo-vllm (1 prefill worker tp4 ep4 with DP attention, 6 decode workers tp4).
META = {
    "is_multinode": True,
    "framework": "dynamo-vllm",
    "precision": "fp4",
    "spec_decoding": "none",
    "recipe_fingerprint": "fe994e4b795c195bbb7ff0b4224ab86cc10f51597835b8dc9bb05cded083629f",
    "tp": 4,
    "pp": 1,
    "dcp_size": 1,
    "pcp_size": 1,
    "conc": 192,
    "ep": 4,
    "dp_attention": "true",
    "prefill_tp": 4,
    "prefill_pp": 1,
    "prefill_dcp_size": 1,
    "prefill_pcp_size": 1,
    "prefill_ep": 4,
    "prefill_dp_attention": "true",
    "prefill_num_workers": 1,
    "decode_tp": 4,
    "decode_pp": 1,
    "decode_dcp_size": 1,
    "decode_pcp_size": 1,
    "decode_ep": 1,
    "decode_dp_attention": "false",
    "decode_num_workers": 6,
    "model": MODEL,
    "infmax_model_prefix": "dsv4",
    "hw": "gb300",
    "isl": 8192,
    "osl": 1024,
}


@dataclass(frozen=True)
class Run:
    """One lm-eval run of a fixture folder: its concurrency, how the stand-in answers, the slice."""

    conc: int
    policy: Policy
    limit: int | None = None  # lm-eval's --limit (the eval stage's EVAL_LIMIT); None: the whole split
    suffix: bool = False  # a batched eval's file: `_conc<N>` before .json


# The folders (the scores each run gives are in tests/results/test_evals.py):
# - flat: the reference's single-concurrency eval of a 1,319-question split, run twice (a re-run):
#   the older run read 1,031 strict = 0.7817, the newer 1,194 strict = 0.9052 and 1,240 flexible
#   = 0.9401 (the reference's own example against its dsv4 floor 0.91);
# - batched: EVAL_CONC "16 32" on a 100-question slice, 16 run twice (0.85, then 0.91 = the floor), 32 once;
# - batched-failed: EVAL_CONC "16 32 64", the engine gone at 64 (lm-eval exits 1 and writes nothing).
FOLDERS = {
    "flat": (META, [Run(192, Policy(1031, 69)), Run(192, Policy(1194, 46))]),
    "batched": (
        {**META, "conc": 16, "eval_concs": [16, 32], "completed_eval_concs": [16, 32], "failed_eval_concs": []},
        [Run(16, Policy(85, 4), SMOKE, True), Run(16, Policy(91, 4), SMOKE, True), Run(32, Policy(93, 3), SMOKE, True)],
    ),
    "batched-failed": (
        {**META, "conc": 16, "eval_concs": [16, 32, 64], "completed_eval_concs": [16, 32], "failed_eval_concs": [64]},
        [
            Run(16, Policy(94, 3), SMOKE, True),
            Run(32, Policy(92, 3), SMOKE, True),
            Run(64, Policy(0, fail=True), SMOKE, True),
        ],
    ),
}


def run_once(server, task_dir: Path, run: Run, scratch: Path) -> tuple[Path, list[Path]] | None:
    """One lm-eval run; its files, or None when lm-eval failed (as it does against a dead engine)."""
    ChatHandler.policy = run.policy
    out = scratch / f"out-{len(list(scratch.glob('out-*')))}"
    done = run_lm_eval(server.server_address[1], task_dir, out, run.conc, scratch, limit=run.limit)
    if done.returncode != 0:
        if not run.policy.fail:
            raise RuntimeError(f"lm-eval failed: {done.stderr[-3000:]}")
        return None
    return staged(out)


def write_fixtures(dest: Path) -> None:
    """Every folder of FOLDERS under ``dest``, as the eval stage stages them: meta_env.json, each run's
    results_<date>.json (batched: results_<date>_conc<N>.json) and its samples file, first lines only."""
    with tempfile.TemporaryDirectory() as tmp, standin_server() as server:
        scratch = Path(tmp)
        task_dir = write_task(scratch / "task")
        for name, (meta, runs) in FOLDERS.items():
            folder = dest / name
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            (folder / "meta_env.json").write_text(json.dumps(meta, indent=2) + "\n")
            for run in runs:
                files = run_once(server, task_dir, run, scratch)
                if files is None:
                    continue
                results, samples = files
                tag = f"_conc{run.conc}" if run.suffix else ""
                shutil.copy(results, folder / f"{results.stem}{tag}.json")
                for sample in samples:
                    lines = sample.read_text().splitlines(keepends=True)[:SAMPLE_LINES]
                    (folder / f"{sample.stem}{tag}.jsonl").write_text("".join(lines))


if __name__ == "__main__":
    write_fixtures(Path(sys.argv[1]))
