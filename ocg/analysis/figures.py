"""Figures 3 and 4 of the paper with seaborn."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

# Each figure is closed once drawn: a notebook shows it once with display(fig) (inline backend,
# as under papermill), and a script without a display never opens a window.


def figure3(data: pd.DataFrame, n_models: int):
    """Bars: ordered concept lists per number of models that composed them; line: cumulative %."""
    sns.set_theme(style="whitegrid", context="paper")
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    sns.barplot(data=data, x="n_models", y="cumulative_percent", color="#9ecae1", ax=ax)
    ax.set_xlabel(f"Number of models (of {n_models}) that composed the ordered concept list")
    ax.set_ylabel("Cumulative percentage of lists")
    ax.set_ylim(0, 100)
    twin = ax.twinx()
    twin.plot(range(len(data)), data["n_lists"], color="#d62728", marker="o", lw=1.5)
    twin.set_ylabel("Lists in bin", color="#d62728")
    twin.grid(False)
    ax.set_title("Figure 3: ordered concept lists composed, by number of models")
    fig.tight_layout()
    plt.close(fig)
    return fig


def figure4(data: pd.DataFrame, all_permutations: int | None = None):
    """Heatmap: concept sets by permutations composed (rows) and model threshold (columns); rows
    run 0..m, the permutations of a set present; `all_permutations` (n!) is named when m is less."""
    present = len(data) - 1
    sns.set_theme(style="white", context="paper")
    height = max(3.0, 0.22 * len(data) + 1)
    fig, ax = plt.subplots(figsize=(max(4.0, 0.45 * data.shape[1] + 2), height))
    sns.heatmap(
        data.iloc[::-1],
        annot=True,
        fmt="d",
        cmap="Blues",
        cbar_kws={"label": "concept sets"},
        ax=ax,
        annot_kws={"size": 6},
    )
    ax.set_xlabel("Composed by at least k models")
    ax.set_ylabel(f"Permutations composed (of {present})")
    sampled = (
        f"\n({present} of {all_permutations} permutations per set, sampled)"
        if all_permutations and all_permutations != present
        else ""
    )
    ax.set_title("Figure 4: permutations composed per concept set" + sampled)
    fig.tight_layout()
    plt.close(fig)
    return fig


def pass_at_k_curve(data: pd.DataFrame):
    """Lines: ordered pass@k (%) over k, one per model and condition (analysis/samples.py)."""
    sns.set_theme(style="whitegrid", context="paper")
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    lines = data.assign(line=data["model"].astype(str) + " · " + data["condition"].astype(str))
    sns.lineplot(data=lines, x="k", y="pass_at_k", hue="line", marker="o", ax=ax)
    ax.set_xlabel("k (samples drawn)")
    ax.set_ylabel("pass@k: composed in order (%)")
    ax.set_ylim(0, 100)
    ax.set_xticks(sorted(data["k"].unique()))
    ax.legend(title=None, fontsize=7)
    ax.set_title("Ordered pass@k: at least one of k samples composes the list in order")
    fig.tight_layout()
    plt.close(fig)
    return fig


def figures_3_and_4(composed: pd.DataFrame, n_models: int) -> dict:
    """Figures 3 and 4 with their data, from `difficulty.composed_by`: one function for notebooks
    08 and 11, so the two draw the same figures (labels included) from the same counts."""
    from . import difficulty

    _, n_all = difficulty.permutations_counted(composed)
    fig3_data, fig4_data = (
        difficulty.figure3_data(composed, n_models),
        difficulty.figure4_data(composed, n_models),
    )
    return {
        "figure3_data": fig3_data,
        "figure4_data": fig4_data,
        "figure3": figure3(fig3_data, n_models),
        "figure4": figure4(fig4_data, n_all),
    }
