"""Eval folders -> eval rows: lm-eval's scores per point, concurrency and task.

An eval folder holds `meta_env.json` (what ran: model, hardware, topology, concurrency; for a
batched eval also the manifest `eval_concs`, `completed_eval_concs`, `failed_eval_concs`) and
lm-eval's result files: any JSON object there with a top-level `lm_eval_version`. It is what
srt-slurm's eval stage leaves (and what the reference's collector reads), found as the folder
given, a folder one level down, or the `eval/` folder of either (a point artifact's).

Which files count (the reference's rules; docs/results.md says where infx differs):

- not batched (no `eval_concs`): the newest result file, one row per task;
- batched: per `_conc<N>` suffix the newest file, and only the concurrencies in
  `completed_eval_concs`; so a re-run that left two files for one concurrency gives one row.
  "Newest" is the start time lm-eval records in the file (`date`), else the file's modification
  time (which a download or a checkout resets).

Per task: the base metric is the first of the task config's `metric_list` (default
`exact_match`); a filter whose name holds `strict` or `resolved` gives `em_strict`, one with
`flex` or `extract` gives `em_flexible`; a task without filters gives `acc` as `accuracy`, else
the base metric as `em_strict`. `score` is `em_strict`, else `accuracy`.

The manifest of a batched eval is checked here, each inconsistency under its own rule id
(``infx.results.evals.rules.RULES``), and recorded with the folder, so `infx results check-evals`
reports it from results.json. Every row is checked against infx/schemas/eval-row.schema.json.

The modules, lowest first: ``rules`` (every rule id and its hint), ``rows`` (the typed records of
results.json's `evals`, and the row values read from meta_env.json), ``folder`` (one eval folder:
its files, lm-eval's result files, the batch manifest), ``collection`` (finding eval folders,
collecting them, reading results.json's `evals` back). They read files; none writes one.

Effects: filesystem (the eval folders read).
"""
