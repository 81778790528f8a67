"""ocg: the research workbench for Ordered CommonGen (Sakai et al., ACL 2025)."""

__version__ = "0.1.0"
