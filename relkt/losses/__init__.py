"""Losses: the teacher's triplet loss and (stage 2) the distillation loss."""

from relkt.losses.distances import DISTANCES, row_distance
from relkt.losses.distillation_loss import (
    DOCUMENT,
    OBJECTIVES,
    QUESTION,
    DistillationLoss,
    distillation_components,
    distillation_loss,
    distillation_terms,
    stack_columns,
)
from relkt.losses.triplet_loss import TripletLoss, triplet_loss

__all__ = [
    "DISTANCES",
    "DOCUMENT",
    "DistillationLoss",
    "OBJECTIVES",
    "QUESTION",
    "TripletLoss",
    "distillation_components",
    "distillation_loss",
    "distillation_terms",
    "row_distance",
    "stack_columns",
    "triplet_loss",
]
