"""Losses: the teacher's triplet loss or in-batch softmax and (stage 2) the distillation loss over its named terms."""

from relkt.losses.distances import DISTANCES, row_distance
from relkt.losses.distillation_loss import DistillationLoss, distillation_components, distillation_loss
from relkt.losses.in_batch_softmax_loss import InBatchSoftmaxLoss, in_batch_softmax_loss
from relkt.losses.loss_terms import STUDENT_INPUTS, TEACHER_TARGETS, TERMS, LossTerm
from relkt.losses.triplet_loss import TripletLoss, triplet_loss

__all__ = [
    "DISTANCES",
    "STUDENT_INPUTS",
    "TEACHER_TARGETS",
    "TERMS",
    "DistillationLoss",
    "InBatchSoftmaxLoss",
    "LossTerm",
    "TripletLoss",
    "distillation_components",
    "distillation_loss",
    "in_batch_softmax_loss",
    "row_distance",
    "triplet_loss",
]
