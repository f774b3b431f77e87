"""shoparena: an ORO/ShoppingBench-compatible arena turned into a trajectory primitive."""

__version__ = "0.1.0"
