"""Losses: the teacher's triplet loss and (stage 2) the distillation loss."""

from relkt.losses.distances import DISTANCES, row_distance
from relkt.losses.triplet_loss import TripletLoss, triplet_loss

__all__ = ["DISTANCES", "TripletLoss", "row_distance", "triplet_loss"]
