"""Parameter files' hostile values, shared by the tests that check the loader refuses each one
(naming file and field) and tests/config/test_schemas_refuse.py (the JSON Schemas refuse them
too, or the test says why a schema cannot)."""

BAD_ENTRIES = [
    ({"id": "x/y", "temprature": 0}, "models.m.temprature", "unknown key"),
    ({"revision": "main"}, "models.m.id", "missing"),
    (
        {"id": "x/y", "quantization": "3bit"},
        "models.m.quantization",
        "expected one of none, 4bit, 8bit",
    ),
    ({"id": "x/y", "batch_size": 0}, "models.m.batch_size", "positive integer"),
    ({"id": "x/y", "trust_remote_code": "yes"}, "models.m.trust_remote_code", "expected bool"),
    (
        {"id": "x/y", "answer_extraction": "regex"},
        "models.m.answer_extraction",
        "expected one of",
    ),
    ({"id": "gpt", "backend": "openai"}, "models.m.api", "missing: the openai backend needs"),
    (
        {"id": "gpt", "backend": "openai", "api": {"base_url": "ftp://x", "key_env": "K"}},
        "models.m.api.base_url",
        "http(s) URL",
    ),
    ({"id": "x/y", "base_model": "nope"}, "models.m.base_model", "not an entry"),
    (
        {"id": "x/y", "prompt_date": "2024-13-01"},
        "models.m.prompt_date",
        "expected an ISO date",
    ),
    ({"id": "x/y", "prompt_date": "today"}, "models.m.prompt_date", "expected an ISO date"),
    (
        {"id": "x/y", "generation_overrides": {"repetition_penalti": 1.2}},
        "models.m.generation_overrides.repetition_penalti",
        "not a transformers GenerationConfig setting",
    ),
    (
        {"id": "x/y", "generation_overrides": {"repetition_penalty": "high"}},
        "models.m.generation_overrides.repetition_penalty",
        "expected float",
    ),
    (
        {"id": "x/y", "generation_overrides": {"do_sample": True}},
        "models.m.generation_overrides.do_sample",
        "fixed by ocg",
    ),
    (
        {"id": "x/y", "decoding": "beam"},
        "models.m.decoding",
        "expected one of greedy, model_defaults",
    ),
    (
        {"id": "x/y", "attention": "flash"},
        "models.m.attention",
        "expected one of auto, sdpa, eager",
    ),
    (
        {
            "id": "gpt",
            "backend": "openai",
            "attention": "eager",
            "api": {"base_url": "https://x", "key_env": "K"},
        },
        "models.m.attention",
        "the server's",
    ),
    (
        {"id": "r", "backend": "replay", "attention": "sdpa"},
        "models.m.attention",
        "does not apply",
    ),
    (
        {"id": "x/y", "system_mode": "user"},
        "models.m.system_mode",
        "expected one of auto, system, folded",
    ),
    ({"id": "x/y", "seed": -5}, "models.m.seed", "expected an integer >= 0"),
    ({"id": "embedded:no-such-model"}, "models.m.id", "no embedded model 'no-such-model'"),
    (
        {
            "id": "gpt",
            "backend": "openai",
            "api": {"base_url": "https://x", "key_env": "K", "timeout_s": -1},
        },
        "models.m.api.timeout_s",
        "expected a number > 0",
    ),
    (
        {
            "id": "gpt",
            "backend": "openai",
            "api": {"base_url": "https://x", "key_env": "K", "backoff_s": -2},
        },
        "models.m.api.backoff_s",
        "expected a number >= 0",
    ),
    (
        {
            "id": "gpt",
            "backend": "openai",
            "generation_overrides": {"top_k": 5},
            "api": {"base_url": "https://x", "key_env": "K"},
        },
        "models.m.generation_overrides",
        "API models decode",
    ),
    # the README's old recipe: dtype float32 alone was silently a 4-bit model
    (
        {"id": "x/y", "dtype": "float32"},
        "models.m.quantization",
        "an entry that sets dtype must say its quantization",
    ),
]  # (an entry of a models file, field named, what is said)

BAD_NAMES = ["../../x", "a/b", ".hidden", "", "x y"]  # models' names (keys of `models:`)

BAD_RUNS = [
    (dict(models=[]), "models", "expected a non-empty list"),
    (dict(models=[1, 2]), "models", "expected a non-empty list of str"),
    (dict(models=["no-such-model"]), "models[0]", "is not an entry of"),
    (dict(subset_k=0), "subset_k", "expected a positive number"),
    (dict(subset_k=True), "subset_k", "expected a positive number"),
    (dict(name="../../x"), "name", "a name must start with a letter or digit"),
    (dict(conditions=["ordered", "reversed"]), "conditions[1]", "unknown condition 'reversed'"),
    (dict(n_concepts=3), "n_concepts", "expected 4 or 5"),
    (dict(template_ids=[0, 9]), "template_ids[1]", "unknown template id 9"),
    (dict(template_ids=[]), "template_ids", "expected a non-empty list of int or null"),
    (dict(metrics=["bleu"]), "metrics", "unknown metric(s) ['bleu']"),
    (dict(scoring={"matching_rule": "fuzzy"}), "scoring.matching_rule", "got 'fuzzy'"),
    (dict(scoring={"perplexity_batch": 8}), "scoring.perplexity_batch", "unknown key"),
    (
        dict(scoring={"judge": "no-such-judge"}),
        "scoring.judge",
        "unknown model 'no-such-judge'",
    ),
    (
        dict(table7_pairs={"marco-o1": "qwen2-7b"}),
        "table7_pairs.marco-o1",
        "'marco-o1' is not a model of this file",
    ),
    (
        dict(analysis=["03_main_results", "10_extra"]),
        "analysis[1]",
        "unknown notebook '10_extra'",
    ),
    (dict(colour="blue"), "colour", "unknown key"),
    (dict(outputs=""), "outputs", "empty: expected a folder"),
    (dict(outputs=3), "outputs", "a folder, or null"),
]  # (changes to params/runs/demo.yaml, field named, what is said)

BAD_RUN_FIELDS = [
    ({"samples": True}, "f: samples", "got True; expected a positive number of samples"),
    ({"models": []}, "f: models", "got []; expected a non-empty list of str"),
    ({"models": ["a", 3]}, "f: models", "got ['a', 3]; expected a non-empty list of str"),
    (
        {"sampling": {"temperature": 0}},
        "f: sampling.temperature",
        "got 0; expected a temperature > 0",
    ),
    (
        {"sampling": {"temperature": 1, "top_p": 2}},
        "f: sampling.top_p",
        "got 2; expected at most 1.0",
    ),
    ({"n_concepts": 6}, "f: n_concepts", "got 6; expected 4 or 5"),
    ({"colour": 1}, "f: colour", "unknown key; known: ['allow_incomplete', "),
    ({"notebooks": ["x"]}, "f: notebooks[0]", "unknown notebook 'x'"),
]  # (a run file's field, where, what is said)

BAD_SLURM = [
    ({"env": {"NOTE": "a\0b"}}, "slurm.env.NOTE", "a NUL character cannot be passed"),
    (
        {"env": {"OCG_OUTPUTS": "/elsewhere"}},
        "slurm.env.OCG_OUTPUTS",
        "set by ocg in every job",
    ),
    (
        {"env": {"OCG_MODEL_CACHE": "/elsewhere"}},
        "slurm.env.OCG_MODEL_CACHE",
        "set by ocg in every job",
    ),
    ({"extra_args": ["--array=0-99"]}, "slurm.extra_args", "ocg sets --array"),
    ({"extra_args": ["--output=/tmp/x"]}, "slurm.extra_args", "leave them out"),
    ({"extra_args": ["--export=NONE"]}, "slurm.extra_args", "leave them out"),
    ({"extra_args": ["--arr", "0"]}, "slurm.extra_args", "leave them out"),  # getopt's prefix
    ({"extra_args": ["-o", "/tmp/x"]}, "slurm.extra_args", "leave them out"),
    ({"extra_args": ["--qos=a\0b"]}, "slurm.extra_args", "NUL"),
    ({"setup": ["echo a\0b"]}, "slurm.setup", "NUL"),
    (
        {"analysis": {"time": "99:99:99"}},
        "slurm.analysis.time",
        "got '99:99:99'; expected Slurm's",
    ),
    ({"analysis": {"time": "1-24"}}, "slurm.analysis.time", "hours below 24"),
    ({"analysis": {"time": "10:60"}}, "slurm.analysis.time", "expected Slurm's"),
]  # (a sweep's `slurm:` changes, field named, what is said)

SERVER = "api: {{base_url: 'http://127.0.0.1:{{port}}/v1', server: {{command: {cmd}}}}}"
MODEL_ENTRIES = [  # (entry of models.yaml, field named, what is said)
    ("{id: a/b, seed: 99999999999999999999}", "models.m.seed", "expected at most 4294967295"),
    (
        "{id: a/b, backend: openai, api: {base_url: 'http://x/v1', key_env: K, timeout_s: .inf}}",
        "models.m.api.timeout_s",
        "expected a finite number",
    ),
    (
        "{id: a/b, backend: openai, api: {base_url: 'http://x/v1', key_env: K, temperature: .nan}}",
        "models.m.api.temperature",
        "expected a finite number",
    ),
    (
        "{id: a/b, generation_overrides: {repetition_penalty: .nan}}",
        "models.m.generation_overrides.repetition_penalty",
        "expected a finite number",
    ),
    (
        "{id: a/b, backend: replay, replay: {rates: {degenerate: .nan}}}",
        "models.m.replay.rates.degenerate",
        "expected a finite number",
    ),
    (
        "{id: a/b, backend: openai, " + SERVER.format(cmd='"vllm serve \'{id}"') + "}",
        "models.m.api.server.command",
        "cannot be split into words",
    ),
    (
        "{id: a/b, backend: openai, api: {base_url: 'http://x/v1', key_env: K, timeout_s: 1.0e+12}}",
        "models.m.api.timeout_s",
        "expected at most 604800",
    ),
    (
        "{id: a/b, backend: openai, api: {base_url: 'http://127.0.0.1:{port}/v1', server: {command: vllm, port: 70000}}}",
        "models.m.api.server.port",
        "expected at most 65535",
    ),
]


BAD_TEMPLATES = [  # (change to params/templates.yaml, field named, what is said)
    (
        (
            '{concepts}\\n\\nWrite a sentence that includes all these words."',
            '{concepts:{concepts}}\\n\\nW"',
            1,
        ),
        "templates.0.original",
        "format spec or conversion",
    ),
    (
        (
            'Concepts: {concepts}\\n\\nWrite a sentence that includes all these words."',
            'Concepts: {concepts:>100000000}"',
            1,
        ),
        "templates.0.original",
        "format spec or conversion",
    ),
    (
        ("Keywords: {concepts}\\n\\nWhat", "Keywords: {concepts!r}\\n\\nWhat", 1),
        "templates.1.original",
        "expected a plain {concepts}",
    ),
    (
        ("templates:\n", "templates: {}\nold_templates:\n", 1),
        "templates",
        "empty; expected at least one",
    ),
    (
        ("concepts: [apple, place, tree, pick]", "concepts: []", 1),
        "one_shot.concepts",
        "non-empty list of words",
    ),
    (
        ("concepts: [apple, place, tree, pick]", "concepts: [1, 2]", 1),
        "one_shot.concepts",
        "list of words",
    ),
]


def _api(**api):
    return {
        "models": {"m": {"id": "x", "backend": "openai", "api": {"base_url": "http://h/v1", **api}}}
    }


def _entry(**entry):
    return {"models": {"m": {"id": "x/y", **entry}}}


_TEXTS = {"original": "{concepts}", "ordered": "{concepts}"}
NEW_BAD = [  # (kind, the file it changes: run, sweep, scoring, templates or none, change, id)
    ("run", "run", {"subset_k": 3.0}, "a float with an integral value (3.0) for an integer"),
    ("run", "run", {"name": "nan"}, "a run named nan (read back as a missing value)"),
    ("run", "run", {"models": ["1e5"]}, "a model named 1e5 (read back as a number)"),
    ("models", None, {"models": {"a..b": {"id": "x"}}}, "an entry named a..b"),
    (
        "templates",
        "templates",
        {"conditions": {"a b": {"text": "ordered", "shot": False}}},
        "a condition named 'a b'",
    ),
    (
        "models",
        None,
        _entry(backend="replay", replay={"rates": {"drop": 1.5}}),
        "a replay rate over 1",
    ),
    (
        "models",
        None,
        _entry(backend="replay", replay={"rates": {"shuffle": 0.1}}),
        "an unknown replay rate",
    ),
    ("models", None, _entry(prompt_date="2025-02-30"), "prompt_date 2025-02-30 (quoted)"),
    ("models", None, _entry(prompt_date="20250101"), "prompt_date 20250101"),
    ("models", None, _api(base_url="http://[::1/v1"), "base_url http://[::1/v1"),
    ("models", None, _api(base_url="http://h:99999/v1"), "base_url with port 99999"),
    ("models", None, _api(base_url="http://h:0/v1"), "base_url with port 0"),
    ("models", None, _api(base_url="http://h/v1\n"), "base_url with a trailing newline"),
    ("models", None, _api(base_url="http://u:p@h/v1"), "base_url with credentials"),
    ("models", None, _api(key_env="K=V"), "key_env K=V"),
    ("models", None, _api(key_env=""), "key_env ''"),
    ("models", None, _entry(id=""), "an empty id"),
    ("models", None, _entry(revision=""), "an empty revision"),
    ("run", "run", {"models_file": ""}, "an empty models_file"),
    ("models", None, _entry(id="a\x1b[31mb"), "an id with an ANSI escape"),
    ("models", None, _entry(paper_name="x\x1b]0;t\x07"), "a paper_name with an ANSI escape"),
    ("models", None, _entry(max_new_tokens=10**6), "max_new_tokens 1000000"),
    ("run", "run", {"samples": 10**6}, "samples 1000000"),
    ("run", "run", {"outputs": "/"}, "outputs /"),
    ("sweep", "sweep", {"outputs": "//"}, "a sweep's outputs //"),
    ("run", "run", {"metrics": []}, "an empty list of metrics"),
    ("scoring", "scoring", {"metrics": ["bleu"]}, "scoring.yaml's unknown metric"),
    ("run", "run", {"scoring": {"spacy_batch_size": 0}}, "a run's scoring override out of bounds"),
    ("scoring", "scoring", {"spacy_processes": 9999}, "spacy_processes 9999"),
    ("scoring", "scoring", {"spacy_processes": 0}, "spacy_processes 0"),
    ("scoring", "scoring", {"spacy_model": "\x1b[2J"}, "a spacy_model with an ANSI escape"),
    ("templates", "templates", {"templates": {-1: _TEXTS}}, "a template id -1"),
    ("sweep", "sweep", {"slurm": {"env": {"A B": "x"}}}, "an env variable named 'A B'"),
    ("sweep", "sweep", {"slurm": {"partition": ""}}, "an empty partition"),
]
NEW_BAD += [
    ("run", "run", {"models": ["smollm2-135m-instruct"] * 2}, "a model listed twice"),
    ("sweep", "sweep", {"slurm": {"setup": ["if true; then"]}}, "a setup line that is not bash"),
]
