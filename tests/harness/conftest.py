"""What the harness tests share: ocg's selection of four answers, and inspect runs on mockllm
whose answers are written from each prompt's concepts (no network, no weights)."""

import pytest

pytest.importorskip("inspect_ai")

from ocg.harness.asked import Selection  # noqa: E402

SMALL = Selection.given(conditions="original,ordered", templates="0", subset=1, permutations=2)


def mock_answer(user_text: str) -> str:
    """An answer of a fixed shape per prompt: the concepts listed in order (a list copy) for the
    first order of a set, reversed and composed otherwise, so the checks' values vary."""
    words = user_text.split("Concepts: ")[1].split("\n")[0].split()
    if words[0] < words[-1]:
        return "The " + ", ".join(words) + "."
    return f"People {words[-1]} and {words[0]} after they {words[1]}."


def mock_model():
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(messages, tools, tool_choice, config):
        out = ModelOutput.from_content(
            model="mockllm/model", content=mock_answer(messages[-1].text)
        )
        # usage given: mockllm would count the prompt's tokens with tiktoken, which is offline here
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=answer)


def run_inspect(log_dir, **task_args):
    from inspect_ai import eval as inspect_eval

    from ocg.harness.inspect_task import ordered_commongen

    (log,) = inspect_eval(
        ordered_commongen(**{**SMALL.as_params(), **task_args}),
        model=mock_model(),
        log_dir=str(log_dir),
        display="none",
    )
    assert log.status == "success", log.error
    return log


@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory):
    return run_inspect(tmp_path_factory.mktemp("inspect-logs"))
