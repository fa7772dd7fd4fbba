"""`minijax.monitoring`: JAX's `jax.monitoring`, over minijax's own registry.

Listeners registered here hear the events minijax records (`frontend/events.py`
says which, under JAX's names for the same moments) and those a program records
itself with `record_*`. The registry is minijax's: `jax.monitoring`'s listeners are
not called for them, and nothing here registers anything with JAX's at import.

One difference from JAX's: `clear_event_listeners` clears the scalar listeners too
(JAX's, on 0.10.2 to 0.12.0.1, leaves them registered: registry entry
`monitoring_clear_keeps_scalar_listeners`).
"""
from __future__ import annotations

from .frontend import events as _events

__all__ = ["record_event", "record_event_duration_secs", "record_event_time_span",
           "record_scalar", "register_event_listener",
           "register_event_duration_secs_listener", "register_event_time_span_listener",
           "register_scalar_listener", "unregister_event_listener",
           "unregister_event_duration_listener", "unregister_event_time_span_listener",
           "unregister_scalar_listener", "clear_event_listeners"]


def record_event(event: str, **kwargs: str | int) -> None:
    """Call every event listener with `event` and the keyword arguments."""
    _events.record_event(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Call every duration listener with `event`, `duration` (seconds) and the
    keyword arguments."""
    _events.record_event_duration_secs(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Call every time-span listener with `event`, its start and end times (seconds)
    and the keyword arguments."""
    _events.record_event_time_span(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Call every scalar listener with `event`, `value` and the keyword arguments."""
    _events.record_scalar(event, value, **kwargs)


def _unregister(listeners: list, callback, kind: str) -> None:
    # AssertionError, as JAX's `assert callback in listeners`
    if callback not in listeners:
        raise AssertionError(f"unregister_{kind}_listener: {callback!r} is not a "
                             f"registered {kind} listener")
    listeners.remove(callback)


def register_event_listener(callback) -> None:
    """Call `callback(event, **kwargs)` at each `record_event`."""
    _events.event_listeners.append(callback)


def register_event_duration_secs_listener(callback) -> None:
    """Call `callback(event, duration_secs, **kwargs)` at each
    `record_event_duration_secs`."""
    _events.duration_listeners.append(callback)


def register_event_time_span_listener(callback) -> None:
    """Call `callback(event, start_time, end_time, **kwargs)` at each
    `record_event_time_span`."""
    _events.time_span_listeners.append(callback)


def register_scalar_listener(callback) -> None:
    """Call `callback(event, value, **kwargs)` at each `record_scalar`."""
    _events.scalar_listeners.append(callback)


def unregister_event_listener(callback) -> None:
    _unregister(_events.event_listeners, callback, "event")


def unregister_event_duration_listener(callback) -> None:
    _unregister(_events.duration_listeners, callback, "event_duration")


def unregister_event_time_span_listener(callback) -> None:
    _unregister(_events.time_span_listeners, callback, "event_time_span")


def unregister_scalar_listener(callback) -> None:
    _unregister(_events.scalar_listeners, callback, "scalar")


def clear_event_listeners() -> None:
    """Unregister every listener of every kind."""
    _events.clear()
