"""Typed op descriptions (gnnc_op_desc) as hashable Python values, the keys
of the kernel caches. No torch needed."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

from . import _lib
from ._lib import DType, OpKind, Reduce, Scale, SddmmForm

REDUCES = {"sum": Reduce.SUM, "mean": Reduce.MEAN, "max": Reduce.MAX}
NORMS = {"none": Scale.NONE, "left": Scale.LEFT, "right": Scale.RIGHT,
         "both": Scale.BOTH}
FORMS = {"dot": SddmmForm.DOT, "add": SddmmForm.ADD}
#: torch dtype names -> gnnc dtypes (str(torch.float32) == "torch.float32").
DTYPES = {"torch.float32": DType.F32, "torch.float16": DType.F16,
          "torch.bfloat16": DType.BF16}
DTYPE_SIZES = {DType.F32: 4, DType.F16: 2, DType.BF16: 2}


def _choice(table, value, what):
    try:
        return table[value]
    except KeyError:
        raise ValueError(
            f"{what} must be one of {', '.join(map(repr, table))}, got {value!r}"
        ) from None


def dtype_code(dtype) -> DType:
    """The gnnc dtype of a torch dtype (or its name)."""
    name = str(dtype)
    if not name.startswith("torch."):
        name = "torch." + name
    if name not in DTYPES:
        raise TypeError(
            f"gnnc kernels take float32, float16 or bfloat16 tensors, got {dtype}")
    return DTYPES[name]


@dataclass(frozen=True)
class OpSpec:
    """One op, as gnnc_op_desc describes it. Hashable: the kernel cache key."""

    kind: OpKind
    dtype: DType = DType.F32
    width: int = 0
    row_stride: int = 0
    edge_values: bool = False
    reduce: Reduce = Reduce.SUM
    scale: Scale = Scale.NONE
    self_weight: Optional[float] = None
    col_norm_exponent: Optional[float] = None
    form: SddmmForm = SddmmForm.DOT
    leaky_relu: Optional[float] = None
    #: spmm: GAT's softmax weights from scores given at launch.
    attention: bool = False

    @staticmethod
    def spmm(dtype, width, *, row_stride=0, edge_values=False, reduce="sum",
             norm="none", self_weight=None) -> "OpSpec":
        return OpSpec(OpKind.SPMM, dtype_code(dtype) if not isinstance(dtype, DType) else dtype,
                      int(width), int(row_stride), bool(edge_values),
                      _choice(REDUCES, reduce, "reduce"),
                      _choice(NORMS, norm, "norm"),
                      None if self_weight is None else float(self_weight))

    @staticmethod
    def spmm_attention(dtype, width, *, row_stride=0,
                       leaky_relu=None) -> "OpSpec":
        """spmm whose edge weights are the row softmax of
        leaky_relu(att_dst[r] + att_src[c]) (gnnc_spmm_attention)."""
        return OpSpec(OpKind.SPMM, dtype_code(dtype) if not isinstance(dtype, DType) else dtype,
                      int(width), int(row_stride),
                      leaky_relu=None if leaky_relu is None else float(leaky_relu),
                      attention=True)

    @staticmethod
    def sddmm(dtype, width, *, form="dot", leaky_relu=None) -> "OpSpec":
        return OpSpec(OpKind.SDDMM, dtype_code(dtype) if not isinstance(dtype, DType) else dtype,
                      int(width), form=_choice(FORMS, form, "form"),
                      leaky_relu=None if leaky_relu is None else float(leaky_relu))

    @staticmethod
    def edge_softmax(dtype, heads, grad=False) -> "OpSpec":
        return OpSpec(OpKind.EDGE_SOFTMAX_GRAD if grad else OpKind.EDGE_SOFTMAX,
                      dtype_code(dtype) if not isinstance(dtype, DType) else dtype,
                      int(heads))

    def describe(self) -> str:
        """A short description, e.g. 'spmm f16 width 128 norm=both values'."""
        parts = [self.kind.name.lower(), self.dtype.name.lower(), f"width {self.width}"]
        if self.row_stride:
            parts.append(f"stride {self.row_stride}")
        if self.kind == OpKind.SPMM:
            if self.reduce != Reduce.SUM:
                parts.append(f"reduce={self.reduce.name.lower()}")
            if self.scale != Scale.NONE:
                parts.append(f"norm={self.scale.name.lower()}")
            if self.edge_values:
                parts.append("values")
            if self.self_weight is not None:
                parts.append(f"self={self.self_weight:g}")
            if self.col_norm_exponent is not None:
                parts.append(f"col_exp={self.col_norm_exponent:g}")
            if self.attention:
                parts.append("attention")
                if self.leaky_relu is not None:
                    parts.append(f"leaky_relu={self.leaky_relu:g}")
        elif self.kind == OpKind.SDDMM:
            parts.append(f"form={self.form.name.lower()}")
            if self.leaky_relu is not None:
                parts.append(f"leaky_relu={self.leaky_relu:g}")
        return " ".join(parts)

    def with_(self, **changes) -> "OpSpec":
        return replace(self, **changes)

    def to_struct(self) -> _lib.OpDescStruct:
        d = _lib.op_desc_init()
        d.kind = int(self.kind)
        d.dtype = int(self.dtype)
        d.width = self.width
        d.row_stride = self.row_stride
        d.edge_values = int(self.edge_values)
        d.reduce = int(self.reduce)
        d.scale = int(self.scale)
        d.has_self_weight = int(self.self_weight is not None)
        d.self_weight = self.self_weight or 0.0
        d.has_col_norm_exponent = int(self.col_norm_exponent is not None)
        d.col_norm_exponent = (0.5 if self.col_norm_exponent is None
                               else self.col_norm_exponent)
        d.form = int(self.form)
        d.has_leaky_relu = int(self.leaky_relu is not None)
        d.leaky_relu = self.leaky_relu or 0.0
        d.attention = int(self.attention)
        return d

    @staticmethod
    def from_struct(d: _lib.OpDescStruct) -> "OpSpec":
        return OpSpec(
            OpKind(d.kind), DType(d.dtype), int(d.width), int(d.row_stride),
            bool(d.edge_values), Reduce(d.reduce), Scale(d.scale),
            float(d.self_weight) if d.has_self_weight else None,
            float(d.col_norm_exponent) if d.has_col_norm_exponent else None,
            SddmmForm(d.form),
            float(d.leaky_relu) if d.has_leaky_relu else None,
            bool(d.attention))

    def feature_grad(self) -> "OpSpec":
        """The op of the spmm feature gradient (gnnc_spmm_feature_grad_op),
        to run over the transposed graph. It keeps the self term, whose
        gradient (1 + eps) * dy[r] is the self term of the gradient op."""
        return OpSpec.from_struct(_lib.spmm_feature_grad_op(self.to_struct()))

    def check(self, schedule: Optional[str] = None) -> None:
        """gnnc_op_check: raises GnncError saying which rule is broken."""
        _lib.op_check(self.to_struct(), schedule)
