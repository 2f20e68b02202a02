"""Errors shared by the real-model adapters; each message is one line naming the model and the problem."""

from __future__ import annotations


class ModelCallError(RuntimeError):
    """A call that failed for good (retries exhausted, or not retryable): it never becomes a scored answer."""


class ModelConfigError(ValueError):
    """A model spec or setting that cannot work (missing model id, package not installed, bad number...)."""
