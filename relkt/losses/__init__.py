"""Losses: the teacher's triplet loss and (stage 2) the distillation loss."""

from relkt.losses.distances import DISTANCES, row_distance
from relkt.losses.distillation_loss import OBJECTIVES, DistillationLoss, distillation_loss, distillation_terms
from relkt.losses.triplet_loss import TripletLoss, triplet_loss

__all__ = [
    "DISTANCES", "DistillationLoss", "OBJECTIVES", "TripletLoss", "distillation_loss", "distillation_terms",
    "row_distance", "triplet_loss",
]
