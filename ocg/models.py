"""The model registry (params/models.yaml): validated entries, errors naming model and field."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from .embedded import EMBEDDED_MODELS, EMBEDDED_PREFIX
from .errors import OcgInputError
from .io import read_yaml
from .names import check_name
from .paths import PARAMS_DIR

MODELS_FILE = PARAMS_DIR / "models.yaml"

BACKENDS = ("transformers", "openai")
QUANTIZATIONS = ("none", "4bit", "8bit")
DTYPES = ("auto", "float32", "bfloat16", "float16")
EXTRACTIONS = ("plain", "think", "marco_o1")
SYSTEM_MODES = ("auto", "system", "folded")  # auto: probe the chat template (API models: system)
DECODINGS = ("greedy", "model_defaults")  # see docs/METHODS.md, "Decoding"
SYSTEM_PROMPTS = ("paper", "template_default")
# The calendar date every chat template sees (Llama 3.x writes "Today Date: ..." into the system
# turn). The Llama 3.1 template's own fallback date; pinned so a rerun asks the same prompt.
DEFAULT_PROMPT_DATE = "2024-07-26"
API_FIELDS = {"base_url": str, "key_env": (str, type(None)), "concurrency": int, "timeout_s": (int, float),
              "max_retries": int, "temperature": (int, float, type(None)), "backoff_s": (int, float),
              "token_param": str, "max_retry_wait_s": (int, float), "server": dict}
API_DEFAULTS = {"concurrency": 8, "timeout_s": 120, "max_retries": 6, "temperature": 0,
                "backoff_s": 1.0, "token_param": "max_tokens", "max_retry_wait_s": 300}


@dataclass(frozen=True)
class ModelSpec:
    name: str
    id: str
    backend: str = "transformers"
    revision: str = "main"
    quantization: str = "4bit"
    dtype: str = "bfloat16"
    trust_remote_code: bool = False
    max_new_tokens: int = 128
    batch_size: int = 32
    seed: int = 42
    answer_extraction: str = "plain"
    system_mode: str = "auto"
    system_prompt: str = "paper"
    prompt_date: str = DEFAULT_PROMPT_DATE
    decoding: str = "greedy"
    generation_overrides: dict = field(default_factory=dict)
    batch_check: int = 16
    paper_name: str | None = None
    paper_id: str | None = None
    base_model: str | None = None
    api: dict = field(default_factory=dict)

    @property
    def paper_key(self) -> str:
        """The id the paper's tables use for this model (Table 5), for the comparison join."""
        return self.paper_id or self.id

    def as_dict(self) -> dict:
        return asdict(self)


FIELD_TYPES = {"id": str, "backend": str, "revision": str, "quantization": str, "dtype": str,
               "trust_remote_code": bool, "max_new_tokens": int, "batch_size": int, "seed": int,
               "answer_extraction": str, "system_mode": str, "system_prompt": str,
               "prompt_date": str, "decoding": str, "generation_overrides": dict, "batch_check": int,
               "paper_name": str, "paper_id": str, "base_model": str, "api": dict}
CHOICES = {"backend": BACKENDS, "quantization": QUANTIZATIONS, "dtype": DTYPES,
           "answer_extraction": EXTRACTIONS, "system_mode": SYSTEM_MODES, "decoding": DECODINGS,
           "system_prompt": SYSTEM_PROMPTS}


def _validate_value(where: str, key: str, value):
    kind = FIELD_TYPES[key]
    if value is None and key in ("paper_name", "paper_id", "base_model"):
        return
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise OcgInputError(f"{where}.{key}", f"expected {kind.__name__}, got {value!r}")
    if key in CHOICES and value not in CHOICES[key]:
        raise OcgInputError(f"{where}.{key}", f"got {value!r}; expected one of {', '.join(CHOICES[key])}")
    if key in ("max_new_tokens", "batch_size") and value < 1:
        raise OcgInputError(f"{where}.{key}", f"got {value}; expected a positive integer")
    if key == "id" and not value.strip():
        raise OcgInputError(f"{where}.{key}", "empty id")
    if key == "id" and value.startswith(EMBEDDED_PREFIX) and value[len(EMBEDDED_PREFIX):] not in EMBEDDED_MODELS:
        raise OcgInputError(f"{where}.{key}", f"no embedded model {value[len(EMBEDDED_PREFIX):]!r}; "
                                              f"known: {sorted(EMBEDDED_MODELS)}")
    if key in ("seed", "batch_check") and value < 0:
        raise OcgInputError(f"{where}.{key}", f"got {value}; expected an integer >= 0")
    if key == "prompt_date":
        _check_date(f"{where}.{key}", value)
    if key == "generation_overrides":
        _check_generation_overrides(f"{where}.{key}", value)


def _check_date(where: str, value: str) -> None:
    import datetime as _dt
    try:
        _dt.date.fromisoformat(value)
    except ValueError:
        raise OcgInputError(where, f"got {value!r}; expected an ISO date YYYY-MM-DD") from None


# Settings that only stop generation or select tokens in ways a user may want to change on
# purpose; anything else a GenerationConfig knows is accepted too, after a type check.
_NEVER_OVERRIDE = {"max_new_tokens", "do_sample", "num_beams", "eos_token_id", "pad_token_id",
                   "bos_token_id"}


def _check_generation_overrides(where: str, overrides: dict) -> None:
    from transformers import GenerationConfig
    known = GenerationConfig().to_dict()
    for key, value in overrides.items():
        if key in _NEVER_OVERRIDE:
            raise OcgInputError(f"{where}.{key}", "set through its own field (max_new_tokens, "
                                "decoding) or fixed by ocg (greedy: do_sample false, one beam)")
        if key not in known:
            raise OcgInputError(f"{where}.{key}", "not a transformers GenerationConfig setting")
        default = known[key]
        if default is not None and not isinstance(value, type(default)) and not (
                isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool)):
            raise OcgInputError(f"{where}.{key}", f"got {value!r}; expected {type(default).__name__}")


def _validate_api(where: str, api: dict, backend: str) -> dict:
    if backend != "openai":
        if api:
            raise OcgInputError(f"{where}.api", "only the openai backend takes an api block")
        return {}
    unknown = sorted(set(api) - set(API_FIELDS))
    if unknown:
        raise OcgInputError(f"{where}.api.{unknown[0]}", f"unknown field; known: {sorted(API_FIELDS)}")
    for key in ("base_url", "key_env"):
        if key not in api and not (key == "key_env" and "server" in api):  # a local server needs no key
            raise OcgInputError(f"{where}.api.{key}", "missing (required by the openai backend)")
    merged = {**API_DEFAULTS, "key_env": None, **api}
    for key, value in merged.items():
        if not isinstance(value, API_FIELDS[key]) or isinstance(value, bool):
            raise OcgInputError(f"{where}.api.{key}", f"got {value!r}")
    if "server" in merged:
        merged["server"] = _validate_server(f"{where}.api.server", merged["server"])
    elif "{port}" in merged["base_url"]:
        raise OcgInputError(f"{where}.api.base_url", "{port} is only filled in when api.server starts a server")
    if not merged["base_url"].startswith(("http://", "https://")):
        raise OcgInputError(f"{where}.api.base_url", f"got {merged['base_url']!r}; expected an http(s) URL")
    for key, low in (("concurrency", 1), ("max_retries", 0), ("timeout_s", 1e-9), ("backoff_s", 0),
                     ("max_retry_wait_s", 0)):
        if merged[key] < low:
            raise OcgInputError(f"{where}.api.{key}", f"got {merged[key]!r}; expected a number "
                                f"{'> 0' if low == 1e-9 else f'>= {low}'}")
    if merged["temperature"] is not None and merged["temperature"] < 0:
        raise OcgInputError(f"{where}.api.temperature", f"got {merged['temperature']!r}; expected >= 0 or null")
    return merged


SERVER_FIELDS = {"command": str, "startup_timeout_s": (int, float), "port": int, "model_dir": str}


def _validate_server(where: str, server: dict) -> dict:
    """A server started for the run: its command ({id}, {port}, {model_dir} filled in)."""
    unknown = sorted(set(server) - set(SERVER_FIELDS))
    if unknown:
        raise OcgInputError(f"{where}.{unknown[0]}", f"unknown field; known: {sorted(SERVER_FIELDS)}")
    if not isinstance(server.get("command"), str) or not server["command"].strip():
        raise OcgInputError(f"{where}.command", "missing: the command that starts the server")
    for key, kind in SERVER_FIELDS.items():
        if key in server and (not isinstance(server[key], kind) or isinstance(server[key], bool)):
            raise OcgInputError(f"{where}.{key}", f"got {server[key]!r}")
    if server.get("startup_timeout_s", 600) <= 0 or not 0 < server.get("port", 1) < 65536:
        raise OcgInputError(where, "startup_timeout_s must be > 0 and port within 1-65535")
    return {"startup_timeout_s": 600, **server}


def parse_models(raw: object, source: str) -> dict[str, ModelSpec]:
    if not isinstance(raw, dict) or not isinstance(raw.get("models"), dict):
        raise OcgInputError(source, "expected a mapping with a 'models' mapping")
    extra = sorted(set(raw) - {"defaults", "models"})
    if extra:
        raise OcgInputError(source, f"unknown top-level key(s) {extra}; expected defaults, models")
    defaults = raw.get("defaults") or {}
    for key, value in defaults.items():
        if key not in FIELD_TYPES or key == "id":
            raise OcgInputError(f"{source}: defaults.{key}", "unknown or not defaultable field")
        _validate_value(f"{source}: defaults", key, value)
    specs = {}
    for name, entry in raw["models"].items():
        where = f"{source}: models.{name}"
        check_name(where, name)
        if not isinstance(entry, dict):
            raise OcgInputError(where, "expected a mapping of fields")
        unknown = sorted(set(entry) - set(FIELD_TYPES))
        if unknown:
            raise OcgInputError(f"{where}.{unknown[0]}", f"unknown field; known: {sorted(FIELD_TYPES)}")
        if "id" not in entry:
            raise OcgInputError(f"{where}.id", "missing: every model needs an id")
        merged = {**defaults, **entry}
        if merged.get("backend") == "openai":  # weights and dtype are the provider's business
            merged["quantization"] = entry.get("quantization", "none")
            merged["dtype"] = entry.get("dtype", "auto")
            merged["batch_check"] = entry.get("batch_check", 0)  # a server's batching is its own
            if merged["quantization"] != "none":
                raise OcgInputError(f"{where}.quantization", "an API model cannot be quantized here")
            if entry.get("generation_overrides") or entry.get("decoding", "greedy") != "greedy":
                raise OcgInputError(f"{where}.generation_overrides", "API models decode as the "
                                    "api block says (temperature); these fields are for transformers")
        for key, value in merged.items():
            _validate_value(where, key, value)
        merged["api"] = _validate_api(where, merged.get("api") or {}, merged.get("backend", "transformers"))
        specs[str(name)] = ModelSpec(name=str(name), **merged)
    for spec in specs.values():
        if spec.base_model and spec.base_model not in specs:
            raise OcgInputError(f"{source}: models.{spec.name}.base_model",
                                f"{spec.base_model!r} is not an entry of this file")
    return specs


def load_models(path: str | Path = MODELS_FILE) -> dict[str, ModelSpec]:
    path = Path(path)
    return parse_models(read_yaml(path), str(path))


def get_model(name: str, path: str | Path = MODELS_FILE) -> ModelSpec:
    models = load_models(path)
    if name not in models:
        import difflib
        close = difflib.get_close_matches(name, models, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise OcgInputError(f"{path}", f"unknown model {name!r}{hint} (known: {len(models)} entries, "
                                       "see params/models.yaml)")
    return models[name]
