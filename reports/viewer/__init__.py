"""The run viewer: a static, self-contained site over run folders (`amnesia-bench view`)."""

from reports.viewer.build import build_viewer

__all__ = ["build_viewer"]
