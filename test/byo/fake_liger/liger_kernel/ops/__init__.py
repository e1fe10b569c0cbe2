"""liger_kernel.ops's LigerFusedMoEFunction, the one name of it kbench's liger branches use
(test stand-in, plain torch)."""
from liger_kernel.ops.fused_moe import LigerFusedMoEFunction  # noqa: F401
