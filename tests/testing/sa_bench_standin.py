"""Run srt-slurm's sa-bench client (benchmark_serving.py, v1.0.50) against a stand-in model server.

The stand-in is an OpenAI-compatible `/v1/completions` endpoint on 127.0.0.1 that streams `max_tokens` chunks
(server-sent events, then a usage chunk and `[DONE]`) at a fixed pace, or, for the all-failed file, answers every
request after the client's test request with HTTP 500. The tokenizer is a word-level tokenizer built from a local file,
so nothing is downloaded. The client is started exactly as bench.sh starts its timed run (same flags), with small
lengths and request counts.

This is how tests/data/results/sa-bench/*.json were produced (the client needs aiohttp,
pandas, datasets, Pillow, tqdm and transformers, which the test environment does not
carry):

    python3 -m venv --system-site-packages /tmp/sabench-venv
    /tmp/sabench-venv/bin/pip install aiohttp pandas datasets Pillow tqdm transformers
    git clone -b v1.0.50 tests/data/srt-slurm/nvidia-srt-slurm.bundle /tmp/srt
    /tmp/sabench-venv/bin/python tests/testing/sa_bench_standin.py /tmp/srt tests/data/results/sa-bench
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

VOCAB = 512
FIRST_TOKEN_DELAY = 0.02  # s
TOKEN_DELAY = 0.004  # s between streamed chunks
MAX_REQUESTS = 400  # the stand-in refuses more than this many requests in one run


class CompletionsHandler(BaseHTTPRequestHandler):
    fail_after: int | None = None  # requests after this many fail (the client's first one is its test run)
    served = 0
    lock = threading.Lock()

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.lock:
            type(self).served += 1
            over = self.served > MAX_REQUESTS
            failing = self.fail_after is not None and self.served > self.fail_after
        if failing or over or not self.path.endswith("/completions"):
            self.send_response(500, "stand-in server: failing on purpose")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        tokens = max(1, int(body.get("max_tokens") or 1))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(FIRST_TOKEN_DELAY)
        for index in range(tokens):
            if index:
                time.sleep(TOKEN_DELAY)
            chunk = {
                "id": "cmpl-standin",
                "object": "text_completion",
                "choices": [{"index": 0, "text": f" w{index % VOCAB}"}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        usage = {"id": "cmpl-standin", "choices": [], "usage": {"prompt_tokens": 0, "completion_tokens": tokens}}
        self.wfile.write(f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()


def write_tokenizer(folder: Path) -> Path:
    """A word-level tokenizer (w0 … w511) saved as a local Hugging Face tokenizer folder."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {f"w{i}": i for i in range(VOCAB - 1)} | {"[UNK]": VOCAB - 1}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]")
    fast.save_pretrained(folder)
    return folder


def run_client(
    srt: Path, port: int, tokenizer: Path, out: Path, name: str, conc: int, prompts: int, isl: int, osl: int
) -> None:
    script = srt / "src/srtctl/benchmarks/scripts/sa-bench/benchmark_serving.py"
    argv = [
        sys.executable,
        "-u",
        str(script),
        "--model",
        "standin-model",
        "--tokenizer",
        str(tokenizer),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--backend",
        "dynamo",
        "--endpoint",
        "/v1/completions",
        "--disable-tqdm",
        "--dataset-name",
        "random",
        "--num-prompts",
        str(prompts),
        "--random-input-len",
        str(isl),
        "--random-output-len",
        str(osl),
        "--random-range-ratio",
        "0.8",
        "--random-num-workers",
        "1",
        "--ignore-eos",
        "--request-rate",
        "inf",
        "--percentile-metrics",
        "ttft,tpot,itl,e2el",
        "--max-concurrency",
        str(conc),
        "--trust-remote-code",
        "--save-result",
        "--result-dir",
        str(out),
        "--result-filename",
        name,
    ]
    subprocess.run(argv, check=True, timeout=120, stdout=subprocess.DEVNULL)


def main(srt: Path, out: Path) -> None:
    import tempfile

    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer = write_tokenizer(Path(tmp) / "tokenizer")
        server = ThreadingHTTPServer(("127.0.0.1", 0), CompletionsHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        port = server.server_address[1]
        try:
            # 1P1D-shaped multinode files (8 prefill + 16 decode GPUs) and an aggregated one.
            for conc in (4, 8):
                run_client(
                    srt,
                    port,
                    tokenizer,
                    out,
                    f"results_concurrency_{conc}_gpus_24_ctx_8_gen_16.json",
                    conc,
                    conc * 10,
                    64,
                    16,
                )
            run_client(srt, port, tokenizer, out, "results_concurrency_4_gpus_4.json", 4, 40, 64, 16)
            # Every timed request fails; only the client's initial test request is answered.
            CompletionsHandler.fail_after = CompletionsHandler.served + 1
            run_client(srt, port, tokenizer, out, "results_concurrency_16_gpus_24_ctx_8_gen_16.json", 16, 32, 64, 16)
        finally:
            server.shutdown()
    for path in sorted(out.glob("*.json")):
        data = json.loads(path.read_text())
        # Keep the fixtures small: the per-request arrays keep their shape, cut to 8 entries.
        for key in ("input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"):
            if isinstance(data.get(key), list):
                data[key] = data[key][:8]
        for key in ("tokenizer_id",):
            data[key] = "standin-tokenizer"
        path.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
