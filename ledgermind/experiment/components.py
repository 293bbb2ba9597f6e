"""Which agent factory and which scorer a run uses: chosen by name through registries.

The config names a component (``agent_factory: ledgermind``, ``scorer: ledgermind``); the name is
looked up in a registry of lazy ``"module:attr"`` entries (``ledgermind.registry``), so the choice
is a closed, listed set instead of an import path probed with ``inspect.signature``.

A dotted path that is not registered is still honoured for a config the user wrote (``trusted``):
an agent factory is called as ``factory(cfg, backend)``, a scorer as ``scorer(item, reply)``
without the ``scoring`` node. A config read back from a run folder is data: only registered
scorers are used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ledgermind.errors import ConfigError
from ledgermind.experiment.runner import Agent, Scorer
from ledgermind.registry import Registry, RegistryError, import_attr

AgentFactory = Callable[[Any, Any], Agent]  # (composed config, backend) -> agent
ScorerBuilder = Callable[[Mapping[str, Any]], Scorer]  # the ``scoring`` node -> Scorer

AGENT_FACTORIES: Registry[AgentFactory] = Registry("agent_factory")
AGENT_FACTORIES.add_lazy("ledgermind", "ledgermind.pipeline:build_agent")
AGENT_FACTORIES.add_lazy("official", "ledgermind.pipeline.official:build_official_agent")

SCORERS: Registry[ScorerBuilder] = Registry("scorer")
SCORERS.add_lazy("ledgermind", "ledgermind.experiment.components:project_scorer")


def project_scorer(node: Mapping[str, Any]) -> Scorer:
    """``ledgermind.scoring.score`` with the ``scoring`` node's ``random_fallback_seed``."""
    import functools

    from ledgermind.scoring import ScoringConfig, score

    seed = node.get("random_fallback_seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ConfigError(f"scoring.random_fallback_seed must be an integer or null, got {seed!r}")
    return functools.partial(score, config=ScoringConfig(random_letter_seed=seed))


def scorer(name: str, node: Mapping[str, Any] | None, *, trusted: bool = True) -> Scorer:
    """The registered scorer ``name`` built from the ``scoring`` node, else a trusted dotted path."""
    if name in SCORERS:
        return resolve(SCORERS, name)(dict(node or {}))
    if not trusted:
        raise ConfigError(
            f"the run's scorer {name!r} is not one of the project's ({', '.join(SCORERS.names())}); a run folder "
            "is data, so it is not imported (pass --trust-config if you made this run yourself)"
        )
    return resolve(SCORERS, name)


def resolve(registry: Registry[Any], name: str) -> Any:
    """The entry ``name`` of ``registry``, else (a user's own) the object at dotted path ``name``; a
    failure is one line."""
    try:
        return registry.get(name) if name in registry else import_attr(name)
    except RegistryError as e:
        raise ConfigError(str(e)) from e
    except (ImportError, AttributeError, ValueError) as e:
        known = ", ".join(registry.names())
        raise ConfigError(
            f"{registry.kind} {name!r} cannot be imported (registered names: {known}): {e}"
        ) from e
