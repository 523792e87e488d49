"""bicrit-smooth-slack: a ψ surrogate for bicrit written in pure Python, found through the
``bicrit`` entry point group.

Once installed, ``bicrit.surrogate("smooth-slack", tau=0.5)`` builds it and every search that
accepts it takes it by name: ``bicrit.search("convex-hull-kbest", oracle, "smooth-slack")``.
"""

from __future__ import annotations

from bicrit_smooth_slack.surrogate import DEFAULT_TAU, SmoothSlack

__all__ = ["DEFAULT_TAU", "SmoothSlack", "__version__"]

__version__ = "0.1.0"
